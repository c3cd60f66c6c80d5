-- A repair whose model provider was down waits and is tried again later (issue 40): its inbox
-- item goes back in line, not before a time, counting the waits so that a provider down for
-- long ends the repair with the provider named instead of trying for ever.
ALTER TABLE inbox ADD COLUMN not_before TEXT;
ALTER TABLE inbox ADD COLUMN provider_waits INTEGER NOT NULL DEFAULT 0;

-- A tier's time budget: the minutes one attempt may take (a model at home costs time, not
-- money); NULL: the agent loop's own limit.
ALTER TABLE tiers ADD COLUMN minutes INTEGER;

-- A call to a model at home costs time, not money: whether it went to one, and how long it
-- was waited for, so that the window can say time where it says cost.
ALTER TABLE usage ADD COLUMN local INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN duration_ms INTEGER NOT NULL DEFAULT 0;

-- A model that gave nothing usable on a workflow's repair (no tool it could run, no answer):
-- the next repair of that workflow does not ask it again but the next tier's model, for a
-- week (issue 40: a weak model ends cleanly, with no second attempt on it).
CREATE TABLE unusable_models (
    workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    provider    TEXT NOT NULL,
    model       TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (workflow_id, provider, model)
);
