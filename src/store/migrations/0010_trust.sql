-- Healing a person can trust (#15).

-- A tier's sampling temperature; NULL: the caller's default (0.1 for repairs).
ALTER TABLE tiers ADD COLUMN temperature REAL;

-- The heal's story: the repair task it started, and the version whose run resolved it.
ALTER TABLE heals ADD COLUMN task_id INTEGER REFERENCES tasks (id) ON DELETE SET NULL;
ALTER TABLE heals ADD COLUMN resolved_major INTEGER;
ALTER TABLE heals ADD COLUMN resolved_minor INTEGER;
ALTER TABLE heals ADD COLUMN resolved_run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL;

-- A step Healer added to a thread itself (the nudge after an unusable reply), not a person's
-- message. The role CHECK of 0003 cannot grow without rebuilding the table (and losing columns
-- other migrations add), so such a step keeps role 'user' and carries this flag.
ALTER TABLE messages ADD COLUMN nudge INTEGER NOT NULL DEFAULT 0;

-- The workflows a checkpoint is about when it is about more than one (SYSTEMIC: every workflow
-- that failed with the shared error, and its latest failed run).
CREATE TABLE checkpoint_workflows (
    checkpoint_id INTEGER NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
    workflow_id   INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    run_id        INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    added_at      TEXT NOT NULL,
    PRIMARY KEY (checkpoint_id, workflow_id)
);

-- A workflow whose repair gave up: further failures with the same error wait for the person
-- (counted on the notification) instead of starting another repair and another notification.
CREATE TABLE repair_holds (
    workflow_id     INTEGER PRIMARY KEY REFERENCES workflows (id) ON DELETE CASCADE,
    signature       TEXT NOT NULL,
    notification_id INTEGER REFERENCES notifications (id) ON DELETE SET NULL,
    since           TEXT NOT NULL
);

-- How often what a notification is about happened again since it was raised.
ALTER TABLE notifications ADD COLUMN repeats INTEGER NOT NULL DEFAULT 0;
ALTER TABLE notifications ADD COLUMN repeated_at TEXT;
