-- The healer service for projects: snapshots of worktrees, each project's healer settings,
-- every invocation (skipped ones too, with their reason), and sessions that resume another.

-- A session that resumed an earlier session of the same task (with a message) points at it.
ALTER TABLE agent_sessions ADD COLUMN resumed_from INTEGER REFERENCES agent_sessions (id) ON DELETE SET NULL;

-- A worktree pinned as a commit under refs/healer/snapshots/<task>/<n> before work is discarded.
CREATE TABLE healer_snapshots (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    ref_name    TEXT NOT NULL,
    commit_id   TEXT NOT NULL,
    worktree    TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    restored_at TEXT,
    UNIQUE (project_id, ref_name)
);
CREATE INDEX healer_snapshots_by_task ON healer_snapshots (project_id, task_id, id);

-- A project's HealerConfig (JSON); no row: the defaults.
CREATE TABLE healer_configs (
    project_id INTEGER PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    config     TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- One wake-up of the healer service on a project failure. The counters of the policy are
-- counted from these rows (a restart does not reset them); skipped ones do not count.
CREATE TABLE healer_invocations (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id       TEXT NOT NULL,
    session_id    INTEGER REFERENCES agent_sessions (id) ON DELETE SET NULL,
    heal_id       INTEGER REFERENCES heals (id) ON DELETE SET NULL,
    scenario      TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('running', 'resolved', 'contained', 'unresolved', 'skipped')),
    reason        TEXT NOT NULL DEFAULT '',      -- why it was skipped, or what it concluded
    spells        TEXT NOT NULL DEFAULT '[]',    -- JSON list of {spell, success, summary}
    snapshot_id   INTEGER REFERENCES healer_snapshots (id) ON DELETE SET NULL,
    followup_task TEXT,                          -- the follow-up task a spell created
    signature     TEXT NOT NULL DEFAULT '',
    started_at    TEXT NOT NULL,
    ended_at      TEXT
);
CREATE INDEX healer_invocations_by_task ON healer_invocations (project_id, task_id, id);
CREATE INDEX healer_invocations_by_session ON healer_invocations (session_id);

-- What the stuck scan has reported (one key per finding: project, task, kind, session), so a
-- restart does not report a still-stuck task again; a finding no longer found is forgotten,
-- so a task stuck again later is reported again.
CREATE TABLE healer_stuck_reported (
    key         TEXT PRIMARY KEY,
    reported_at TEXT NOT NULL
);
