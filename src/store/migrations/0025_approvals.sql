-- The agent asks, the person decides (issue 38): each request a project's preset did not let an
-- agent do without asking, the question (a checkpoint) it became, and the answer. An answer "for
-- this task" or "always in this project" is kept as a rule.
CREATE TABLE approvals (
    id              INTEGER PRIMARY KEY,
    project_id      INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id         TEXT NOT NULL,
    session_id      INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    agent           TEXT NOT NULL,
    call_id         TEXT,                    -- the agent's own id of the tool call, when it has one
    request         TEXT NOT NULL,           -- JSON: what it wants to do (approval::Request)
    why             TEXT NOT NULL,           -- why it asks, as the end of "It asks because …"
    rule            TEXT NOT NULL,           -- what "Always allow" allows from then on
    checkpoint_id   INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL,
    status          TEXT NOT NULL DEFAULT 'waiting'
                    CHECK (status IN ('waiting', 'allowed', 'denied', 'expired')),
    scope           TEXT CHECK (scope IN ('once', 'task', 'project')),
    reason          TEXT,                    -- the person's words to the agent with a deny
    created_at      TEXT NOT NULL,
    deadline_at     TEXT NOT NULL,           -- denied if nobody answered by then
    answered_at     TEXT,
    used_at         TEXT,                    -- an allow-once spent by the command it allowed
    resumed_session INTEGER                  -- the session resumed with the answer, when the one
                                             -- that asked had ended (Healer stopped meanwhile)
);
CREATE INDEX approvals_waiting ON approvals (deadline_at) WHERE status = 'waiting';
CREATE INDEX approvals_by_session ON approvals (session_id, id);
CREATE INDEX approvals_by_checkpoint ON approvals (checkpoint_id);

-- What the person allowed for good: for one task ('' for the whole project).
CREATE TABLE approval_rules (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL DEFAULT '',
    rule        TEXT NOT NULL,
    approval_id INTEGER REFERENCES approvals (id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    UNIQUE (project_id, task_id, rule)
);
