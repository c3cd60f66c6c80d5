-- A workflow's secrets: only their names and where the values are kept. The values are in the
-- OS keyring or Healer's own secrets file, never in this database.
CREATE TABLE workflow_secrets (
    workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    kept_in     TEXT NOT NULL CHECK (kept_in IN ('keyring', 'file')),
    saved_at    TEXT NOT NULL,
    PRIMARY KEY (workflow_id, name)
);
