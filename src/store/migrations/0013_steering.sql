-- Steering: a session's true heartbeat and its loop verdict, the timeline of what steering saw
-- and did on each task, and the messages waiting to be delivered into live sessions.

ALTER TABLE agent_sessions ADD COLUMN last_activity_at TEXT;  -- new output of the session only
ALTER TABLE agent_sessions ADD COLUMN loop_rule TEXT;         -- the last loop seen, if any

CREATE TABLE steering_events (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL,
    session_id INTEGER REFERENCES agent_sessions (id) ON DELETE CASCADE,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('loop', 'delivery', 'heartbeat', 'zombie')),
    rule       TEXT,                       -- a loop's rule
    message    TEXT,                       -- what the agent was told, or the reason
    evidence   TEXT NOT NULL DEFAULT '[]', -- JSON list of lines
    detail     TEXT NOT NULL DEFAULT '',   -- a sentence for the person
    tokens     INTEGER NOT NULL DEFAULT 0  -- model tokens steering spent on it
);
CREATE INDEX steering_events_by_task ON steering_events (project_id, task_id, id);
CREATE INDEX steering_events_by_session ON steering_events (session_id, kind, id);

CREATE TABLE steering_messages (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    origin       TEXT NOT NULL CHECK (origin IN ('loop')),
    text         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    delivered_at TEXT,
    via          TEXT   -- thread | dropped (the session ended first)
);
CREATE INDEX steering_messages_waiting ON steering_messages (session_id) WHERE delivered_at IS NULL;
