-- Each workflow's own environment (issue 17): the packages a version declares, the
-- environment they were installed into, what a run's set-up printed, and which package fixed
-- a missing-module failure before.

-- One requirement a line, in the runtime's notation (`PyYAML==6.0.2`, `left-pad@1.3.0`). Part
-- of the version, so 1.1 can differ from 1.0.
ALTER TABLE scripts ADD COLUMN requirements TEXT NOT NULL DEFAULT '';

-- The workflow's environment as last built (a venv under its folder, or its node_modules).
CREATE TABLE environments (
    workflow_id  INTEGER PRIMARY KEY REFERENCES workflows (id) ON DELETE CASCADE,
    requirements TEXT NOT NULL,            -- what it was built from
    ok           INTEGER NOT NULL,
    lock         TEXT NOT NULL DEFAULT '', -- every installed package, pinned, one a line
    log          TEXT NOT NULL DEFAULT '', -- what the installer printed (capped)
    error        TEXT,                     -- the installer's own words when it failed
    interpreter  TEXT NOT NULL DEFAULT '',
    built_at     TEXT NOT NULL
);

-- What was installed before a run (by the run itself, or by the remedy that queued it).
ALTER TABLE runs ADD COLUMN setup_log TEXT;

-- A missing module and the package that was installed for it; settled by the first run of the
-- version it became, like a fix.
CREATE TABLE package_fixes (
    id          INTEGER PRIMARY KEY,
    signature   TEXT NOT NULL,
    runtime     TEXT NOT NULL,
    module      TEXT NOT NULL,
    package     TEXT NOT NULL,
    workflow_id INTEGER REFERENCES workflows (id) ON DELETE SET NULL,
    script_id   INTEGER REFERENCES scripts (id) ON DELETE SET NULL, -- the version it became
    result      TEXT NOT NULL DEFAULT 'pending' CHECK (result IN ('pending', 'success', 'failed')),
    created_at  TEXT NOT NULL,
    settled_at  TEXT
);
CREATE INDEX package_fixes_by_module ON package_fixes (runtime, module, id);
CREATE INDEX package_fixes_by_signature ON package_fixes (signature, id);
CREATE INDEX package_fixes_pending ON package_fixes (script_id) WHERE result = 'pending';

-- What an ENVIRONMENT checkpoint about a package needs when the person answers "Try another
-- package name…": which import, which package failed.
CREATE TABLE package_questions (
    checkpoint_id INTEGER PRIMARY KEY REFERENCES checkpoints (id) ON DELETE CASCADE,
    workflow_id   INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    module        TEXT NOT NULL,
    package       TEXT NOT NULL,
    signature     TEXT NOT NULL
);
