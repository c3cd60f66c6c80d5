-- Comments a person leaves on the lines of an agent's change (issue 39): gathered until sent to
-- the agent as one message, then shown as addressed once the agent's next change touches them.
CREATE TABLE review_comments (
    id              INTEGER PRIMARY KEY,
    project_id      INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id         TEXT NOT NULL,
    path            TEXT NOT NULL,
    line_start      INTEGER NOT NULL CHECK (line_start >= 1),
    line_end        INTEGER NOT NULL CHECK (line_end >= line_start),
    excerpt         TEXT NOT NULL,           -- the lines as they read when the comment was made
    blob            TEXT NOT NULL,           -- the git blob of the whole file as it read then
    text            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    sent_at         TEXT,                    -- when it went to the agent (NULL: still gathering)
    sent_session_id INTEGER,
    addressed_at    TEXT                     -- when the agent's next change touched its lines
);
CREATE INDEX review_comments_task ON review_comments (project_id, task_id);
