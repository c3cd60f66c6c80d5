-- The steering judge: a judgement on the steering timeline (with the action it chose), the judge
-- as a second sender of messages into a live session, and when each task was last judged (kept
-- with the task, so a restart does not judge it again early).

-- SQLite cannot widen a CHECK in place: the two tables are made again with their rows.
CREATE TABLE steering_events_new (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL,
    session_id INTEGER REFERENCES agent_sessions (id) ON DELETE CASCADE,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('loop', 'delivery', 'heartbeat', 'zombie', 'judgement')),
    rule       TEXT,                       -- a loop's rule
    message    TEXT,                       -- what the agent was told, or the reason
    evidence   TEXT NOT NULL DEFAULT '[]', -- JSON list of lines
    detail     TEXT NOT NULL DEFAULT '',   -- a sentence for the person
    tokens     INTEGER NOT NULL DEFAULT 0, -- model tokens steering spent on it
    action     TEXT CHECK (action IN ('continue', 'steer', 'replace'))  -- a judgement's
);
INSERT INTO steering_events_new (id, project_id, task_id, session_id, at, kind, rule, message,
                                 evidence, detail, tokens)
    SELECT id, project_id, task_id, session_id, at, kind, rule, message, evidence, detail, tokens
    FROM steering_events;
DROP TABLE steering_events;
ALTER TABLE steering_events_new RENAME TO steering_events;
CREATE INDEX steering_events_by_task ON steering_events (project_id, task_id, id);
CREATE INDEX steering_events_by_session ON steering_events (session_id, kind, id);

CREATE TABLE steering_messages_new (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    origin       TEXT NOT NULL CHECK (origin IN ('loop', 'judge')),
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

-- One row per task the judge has looked at: the last time, what it chose, bad answers so far.
CREATE TABLE task_judgements (
    project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL,
    judged_at   TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('continue', 'steer', 'replace')),
    bad_answers INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, task_id)
);

-- A replace the judge chose while the project's healer mode is conservative waits for the
-- person: the checkpoint that asks, and the session it would end.
CREATE TABLE steering_checkpoints (
    checkpoint_id INTEGER PRIMARY KEY REFERENCES checkpoints (id) ON DELETE CASCADE,
    session_id    INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    reason        TEXT NOT NULL
);
