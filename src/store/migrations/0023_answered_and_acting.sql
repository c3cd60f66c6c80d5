-- An answered decision is durable until its act is done (issue 36): an invocation carrying out
-- the person's answer keeps the checkpoint it answers (acting_checkpoint) and the spell that
-- asked (asked_spell), so an engine killed mid-act leaves it to the next engine, which carries
-- it on once (act_attempts bounds the tries).
ALTER TABLE healer_invocations ADD COLUMN acting_checkpoint INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL;
ALTER TABLE healer_invocations ADD COLUMN asked_spell INTEGER;
ALTER TABLE healer_invocations ADD COLUMN act_attempts INTEGER NOT NULL DEFAULT 0;
-- Which engine (one run of a process) carries it out: another engine takes it up only from
-- one that is gone, never from one still at it.
ALTER TABLE healer_invocations ADD COLUMN acting_by TEXT;
