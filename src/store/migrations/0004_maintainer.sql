-- The maintainer (auto-fix tasks), the planner's chat, and the inbox that orders their work.

-- A maintainer task's record: the failed run it repairs, the version it started from, and how
-- it ended. NULL outcome while it works.
ALTER TABLE tasks ADD COLUMN run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL;
ALTER TABLE tasks ADD COLUMN from_major INTEGER;
ALTER TABLE tasks ADD COLUMN from_minor INTEGER;
ALTER TABLE tasks ADD COLUMN to_major INTEGER;
ALTER TABLE tasks ADD COLUMN to_minor INTEGER;
ALTER TABLE tasks ADD COLUMN fix_comment TEXT;
ALTER TABLE tasks ADD COLUMN outcome TEXT CHECK (outcome IN ('fixed', 'stale', 'gave_up', 'interrupted'));

-- Work waiting for a task: a maintainer item carries the failed run, a planner item the
-- person's message. One item per workflow is taken at a time; planner items go first.
CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY,
    workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    task_id     INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('planner', 'maintainer')),
    run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    message     TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'taken', 'done')),
    created_at  TEXT NOT NULL,
    taken_at    TEXT,
    done_at     TEXT
);
CREATE INDEX inbox_open ON inbox (workflow_id, status) WHERE status IN ('pending', 'taken');

-- What a notification is about, and the buttons it offers (JSON ["replan", "open_settings"]).
ALTER TABLE notifications ADD COLUMN workflow_id INTEGER REFERENCES workflows (id) ON DELETE SET NULL;
ALTER TABLE notifications ADD COLUMN run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL;
ALTER TABLE notifications ADD COLUMN task_id INTEGER REFERENCES tasks (id) ON DELETE SET NULL;
ALTER TABLE notifications ADD COLUMN actions TEXT NOT NULL DEFAULT '[]';
