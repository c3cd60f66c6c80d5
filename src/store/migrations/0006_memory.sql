-- Healing memory: error signatures, where they were seen, and every fix tried for them; the
-- decisions log; a workflow flagged for review.

CREATE TABLE patterns (
    signature  TEXT PRIMARY KEY,
    error_type TEXT,
    normalized TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    count      INTEGER NOT NULL
);

-- One row per failure with a signature: which workflow, when (the systemic breaker counts them).
CREATE TABLE pattern_hits (
    id          INTEGER PRIMARY KEY,
    signature   TEXT NOT NULL REFERENCES patterns (signature) ON DELETE CASCADE,
    workflow_id INTEGER REFERENCES workflows (id) ON DELETE CASCADE,
    run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    at          TEXT NOT NULL
);
CREATE INDEX pattern_hits_recent ON pattern_hits (signature, at);

-- A fix tried for a signature: the unified diff from the failing code, the hash of the code it
-- applied to, the version it became, and whether its re-run passed.
CREATE TABLE pattern_fixes (
    id          INTEGER PRIMARY KEY,
    signature   TEXT NOT NULL REFERENCES patterns (signature) ON DELETE CASCADE,
    workflow_id INTEGER REFERENCES workflows (id) ON DELETE SET NULL,
    task_id     INTEGER REFERENCES tasks (id) ON DELETE SET NULL,
    script_id   INTEGER REFERENCES scripts (id) ON DELETE SET NULL,
    description TEXT NOT NULL,
    diff        TEXT NOT NULL,
    code_hash   TEXT NOT NULL,
    result      TEXT NOT NULL CHECK (result IN ('pending', 'success', 'failed')),
    created_at  TEXT NOT NULL,
    settled_at  TEXT
);
CREATE INDEX pattern_fixes_by_signature ON pattern_fixes (signature, id);
CREATE INDEX pattern_fixes_pending ON pattern_fixes (script_id) WHERE result = 'pending';

-- The failure a maintainer task repairs.
ALTER TABLE tasks ADD COLUMN signature TEXT;
-- Fixed too often lately: a person should look at it.
ALTER TABLE workflows ADD COLUMN review INTEGER NOT NULL DEFAULT 0;

-- Decisions Healer made on its own that a person should be able to find (rollbacks, breakers).
CREATE TABLE decisions (
    id          INTEGER PRIMARY KEY,
    workflow_id INTEGER REFERENCES workflows (id) ON DELETE SET NULL,
    kind        TEXT NOT NULL,
    summary     TEXT NOT NULL,
    detail      TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);
