-- A project's agent session on the cluster (issue 42): the Temporal id of its HealerSession,
-- kept before the workflow starts, so that a control room that died while it ran cancels it at
-- its next start (the worker then ends the agent and pushes what it did).
ALTER TABLE agent_sessions ADD COLUMN cluster_id TEXT;
