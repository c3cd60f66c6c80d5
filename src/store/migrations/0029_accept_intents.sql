-- "Ask the agent to resolve it" is the person's decision to accept the work once the conflict is
-- resolved (issue 39): kept until the resolving session ends, so an engine that stopped (or was
-- killed) mid-way starts the agent on it again and accepts it as the person chose.
CREATE TABLE accept_intents (
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL,
    how         TEXT NOT NULL,           -- "fast_forward", "merge" or "squash"
    session_id  INTEGER,                 -- the session resolving it (NULL before it started)
    created_at  TEXT NOT NULL,
    PRIMARY KEY (project_id, task_id)
);
