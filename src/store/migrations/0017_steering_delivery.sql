-- A loop, a judgement or the person's own message that put a message in a session's mailbox
-- points at it, so its entry on the timeline says whether the message still waits or was
-- delivered, and how. The person becomes a third sender (a message typed to a live session),
-- and a timeline entry of its own ('message').
-- SQLite cannot widen a CHECK in place: the two tables are made again with their rows (the
-- messages first: nothing points at them yet).
CREATE TABLE steering_messages_new (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    origin       TEXT NOT NULL CHECK (origin IN ('loop', 'judge', 'person')),
    text         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    delivered_at TEXT,
    via          TEXT   -- thread | hook | resume | dropped (the session ended first)
);
INSERT INTO steering_messages_new SELECT id, session_id, origin, text, created_at, delivered_at, via
    FROM steering_messages;
DROP TABLE steering_messages;
ALTER TABLE steering_messages_new RENAME TO steering_messages;
CREATE INDEX steering_messages_waiting ON steering_messages (session_id) WHERE delivered_at IS NULL;

CREATE TABLE steering_events_new (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL,
    session_id INTEGER REFERENCES agent_sessions (id) ON DELETE CASCADE,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('loop', 'delivery', 'heartbeat', 'zombie', 'judgement', 'message')),
    rule       TEXT,                       -- a loop's rule
    message    TEXT,                       -- what the agent was told, or the reason
    evidence   TEXT NOT NULL DEFAULT '[]', -- JSON list of lines
    detail     TEXT NOT NULL DEFAULT '',   -- a sentence for the person
    tokens     INTEGER NOT NULL DEFAULT 0, -- model tokens steering spent on it
    action     TEXT CHECK (action IN ('continue', 'steer', 'replace')),  -- a judgement's
    message_id INTEGER REFERENCES steering_messages (id) ON DELETE SET NULL  -- the message it sent
);
INSERT INTO steering_events_new (id, project_id, task_id, session_id, at, kind, rule, message,
                                 evidence, detail, tokens, action)
    SELECT id, project_id, task_id, session_id, at, kind, rule, message, evidence, detail, tokens, action
    FROM steering_events;
DROP TABLE steering_events;
ALTER TABLE steering_events_new RENAME TO steering_events;
CREATE INDEX steering_events_by_task ON steering_events (project_id, task_id, id);
CREATE INDEX steering_events_by_session ON steering_events (session_id, kind, id);
