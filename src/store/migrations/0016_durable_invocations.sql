-- Durable invocations (issue 24): an invocation is a stored state machine. It keeps the failure
-- it works on, its plan, the index of the next spell, what it waits for (the checkpoint of a
-- question to the person) and what its spells achieved so far, so that any engine — the app,
-- the daemon, or a CLI command deciding the question — carries it on after a restart. A new
-- status, 'waiting', is an invocation that waits for the person's answer.

-- SQLite cannot widen a CHECK in place: the table is made again with its rows.
CREATE TABLE healer_invocations_new (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id       TEXT NOT NULL,
    session_id    INTEGER REFERENCES agent_sessions (id) ON DELETE SET NULL,
    heal_id       INTEGER REFERENCES heals (id) ON DELETE SET NULL,
    scenario      TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('running', 'waiting', 'resolved', 'contained', 'unresolved', 'skipped')),
    reason        TEXT NOT NULL DEFAULT '',      -- why it was skipped, or what it concluded
    spells        TEXT NOT NULL DEFAULT '[]',    -- JSON list of {spell, success, summary}
    snapshot_id   INTEGER REFERENCES healer_snapshots (id) ON DELETE SET NULL,
    followup_task TEXT,                          -- the follow-up task a spell created
    signature     TEXT NOT NULL DEFAULT '',
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    failure       TEXT,                          -- JSON of the Failure it works on
    plan          TEXT NOT NULL DEFAULT '[]',    -- JSON list of spell names, in order
    next_spell    INTEGER NOT NULL DEFAULT 0,    -- index in plan of the spell to cast next
    worked        TEXT NOT NULL DEFAULT '[]',    -- JSON list: what the spells achieved so far
    waiting_checkpoint INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL
);
INSERT INTO healer_invocations_new (id, project_id, task_id, session_id, heal_id, scenario,
    status, reason, spells, snapshot_id, followup_task, signature, started_at, ended_at)
SELECT id, project_id, task_id, session_id, heal_id, scenario, status, reason, spells,
    snapshot_id, followup_task, signature, started_at, ended_at
FROM healer_invocations;
DROP TABLE healer_invocations;
ALTER TABLE healer_invocations_new RENAME TO healer_invocations;
CREATE INDEX healer_invocations_by_task ON healer_invocations (project_id, task_id, id);
CREATE INDEX healer_invocations_by_session ON healer_invocations (session_id);
CREATE INDEX healer_invocations_by_checkpoint ON healer_invocations (waiting_checkpoint);

-- A checkpoint about a project's task (the healer service's rewind, the steering judge's
-- replace) names the project and the task: the window says what waits for the decision.
CREATE TABLE checkpoint_project_tasks (
    checkpoint_id INTEGER PRIMARY KEY REFERENCES checkpoints (id) ON DELETE CASCADE,
    project_id    INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id       TEXT NOT NULL,
    task_title    TEXT NOT NULL
);
