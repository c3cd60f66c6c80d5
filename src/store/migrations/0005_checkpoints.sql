-- Checkpoints (blocking decisions), and what the recovery manager did about failures.

CREATE TABLE checkpoints (
    id             INTEGER PRIMARY KEY,
    trigger        TEXT NOT NULL CHECK (trigger IN ('hiccup', 'cost', 'systemic', 'environment', 'approval')),
    workflow_id    INTEGER REFERENCES workflows (id) ON DELETE CASCADE,
    run_id         INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    task_id        INTEGER REFERENCES tasks (id) ON DELETE SET NULL,
    signature      TEXT,
    context        TEXT NOT NULL,
    options        TEXT NOT NULL,            -- JSON [CheckpointOption], the recommended one flagged
    recommendation TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    chosen         INTEGER,                  -- 1-based option number, once decided
    chosen_action  TEXT,                     -- its action key (proceed, skip, pause, allow_tokens)
    notes          TEXT,
    decided_at     TEXT,
    outcome        TEXT
);
CREATE INDEX checkpoints_pending ON checkpoints (workflow_id) WHERE decided_at IS NULL;
CREATE INDEX checkpoints_history ON checkpoints (trigger, decided_at) WHERE decided_at IS NOT NULL;

-- A run the person chose to skip at a checkpoint; a hint the recovery analyzer gave the run.
ALTER TABLE runs ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN hint TEXT;

-- Level-2 recovery decisions, per failed run: alternative | diagnostics | unblock | escalate.
CREATE TABLE recoveries (
    id          INTEGER PRIMARY KEY,
    workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    signature   TEXT NOT NULL,
    action      TEXT NOT NULL,
    hint        TEXT,
    reasoning   TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX recoveries_by_workflow ON recoveries (workflow_id, signature, id);
