-- Runs on more computers (issue 26). A workflow listed here runs on the Temporal cluster, on
-- the queue given; every other workflow runs on this computer as before.
CREATE TABLE cluster_workflows (
    workflow_id INTEGER PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
    queue TEXT NOT NULL
);

-- A run carried out on the cluster: its Temporal workflow id is unique, so a run the control
-- room started before a crash, or one a cluster schedule started while it was closed, is
-- stored once.
CREATE TABLE cluster_runs (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    temporal_id TEXT NOT NULL UNIQUE,
    queue TEXT NOT NULL
);

-- The schedules Healer put on the cluster, with what they were made from: changed when the
-- workflow changes, taken off when it leaves the cluster or is deleted (no cascade on purpose).
CREATE TABLE cluster_schedules (
    workflow_id INTEGER PRIMARY KEY,
    schedule_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL
);

-- Which computer ran an attempt (a cluster worker's name; empty for this computer).
ALTER TABLE attempts ADD COLUMN worker TEXT;
