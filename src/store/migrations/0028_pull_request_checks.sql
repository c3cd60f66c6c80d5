-- A red check on a task's pull request is healed (issue 39): what its checks said when last read,
-- when to ask the host again (its rate limits respected), and the pushed commit whose failing
-- check was handed to the healer service (handed once per commit).
ALTER TABLE pull_requests ADD COLUMN checks TEXT NOT NULL DEFAULT 'waiting'
    CHECK (checks IN ('waiting', 'passing', 'failing'));
ALTER TABLE pull_requests ADD COLUMN checks_said TEXT NOT NULL DEFAULT '';
ALTER TABLE pull_requests ADD COLUMN next_check_at TEXT;
ALTER TABLE pull_requests ADD COLUMN healed_commit TEXT;
