-- Projects (a person's git repositories) and the agent sessions that work on their tasks.
-- The tasks themselves live in each repository's .healer/tasks.jsonl, not here.

CREATE TABLE projects (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    path       TEXT NOT NULL UNIQUE,
    settings   TEXT NOT NULL,            -- JSON: agent, verification commands, init script, limits
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- One agent session on one task: where it ran, how it ended, the commit it made.
CREATE TABLE agent_sessions (
    id               INTEGER PRIMARY KEY,
    project_id       INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id          TEXT NOT NULL,
    task_title       TEXT NOT NULL,
    agent            TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'timed_out', 'stopped', 'interrupted')),
    worktree         TEXT NOT NULL,
    branch           TEXT NOT NULL,
    base_commit      TEXT,
    pgid             INTEGER,             -- the agent's process group while it runs
    agent_session_id TEXT,                -- the agent's own id (claude/codex resume, the built-in thread)
    transcript       TEXT,
    exit_code        INTEGER,
    summary          TEXT NOT NULL DEFAULT '',
    commit_id        TEXT,
    merged           INTEGER NOT NULL DEFAULT 0,
    started_at       TEXT NOT NULL,
    ended_at         TEXT
);
CREATE INDEX agent_sessions_by_task ON agent_sessions (project_id, task_id, id);
CREATE INDEX agent_sessions_running ON agent_sessions (status) WHERE status = 'running';

-- Every step of a session as it happened (flat, append-only; the ATIF export groups them).
CREATE TABLE session_steps (
    session_id        INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    at                TEXT NOT NULL,
    source            TEXT NOT NULL CHECK (source IN ('system', 'user', 'agent')),
    kind              TEXT NOT NULL CHECK (kind IN ('text', 'tool_call', 'tool_result')),
    text              TEXT NOT NULL,
    tool              TEXT,
    arguments         TEXT,
    call_id           TEXT,
    is_error          INTEGER NOT NULL DEFAULT 0,
    model             TEXT,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cached_tokens     INTEGER,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
