-- A run waiting out a retry's backoff holds no run slot and survives a restart (issue 36): it
-- is queued again with the time its next attempt is due (retry_at) and that attempt's number.
ALTER TABLE runs ADD COLUMN retry_at TEXT;
ALTER TABLE runs ADD COLUMN next_attempt INTEGER;
CREATE INDEX runs_waiting_to_retry ON runs (retry_at) WHERE retry_at IS NOT NULL;
