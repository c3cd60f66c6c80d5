-- What each agent session used of its model, counted by Healer's model gateway from the
-- provider's own answers (issue 36): the agent never holds the key, so every request passes
-- the gateway. cost_usd sums the requests whose model has a price; unpriced_tokens the rest.
CREATE TABLE session_model_use (
    session_id        INTEGER PRIMARY KEY REFERENCES agent_sessions (id) ON DELETE CASCADE,
    requests          INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens     INTEGER NOT NULL DEFAULT 0,
    cost_usd          REAL NOT NULL DEFAULT 0,
    unpriced_tokens   INTEGER NOT NULL DEFAULT 0
);
