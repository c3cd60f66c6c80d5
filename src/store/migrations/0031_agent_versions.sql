-- An agent update never breaks a session silently (issue 41): the version of the agent's
-- program a session ran, read at its start, and the lines of its stream Healer did not
-- understand (kept as raw steps), so that a session whose stream cannot be followed says so.
ALTER TABLE agent_sessions ADD COLUMN agent_version TEXT;
ALTER TABLE agent_sessions ADD COLUMN raw_lines INTEGER NOT NULL DEFAULT 0;

-- Gemini CLI talks to Google's Gemini API: a provider of that kind (issue 41), for agent
-- sessions through Healer's model gateway. SQLite cannot change a CHECK in place: the table is
-- made again, its tiers and prices kept aside while the old one goes (it cascades to them).
CREATE TEMP TABLE kept_prices AS SELECT * FROM model_prices;
CREATE TEMP TABLE kept_tiers AS SELECT * FROM tiers;
CREATE TABLE providers_new (
    name       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('openai_compatible', 'anthropic', 'ollama', 'gemini')),
    base_url   TEXT NOT NULL,
    key_env    TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    title      TEXT
);
INSERT INTO providers_new (name, kind, base_url, key_env, created_at, updated_at, title)
    SELECT name, kind, base_url, key_env, created_at, updated_at, title FROM providers;
DROP TABLE providers;
ALTER TABLE providers_new RENAME TO providers;
INSERT INTO model_prices SELECT * FROM kept_prices;
INSERT INTO tiers SELECT * FROM kept_tiers;
DROP TABLE kept_prices;
DROP TABLE kept_tiers;
