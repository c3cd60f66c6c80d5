-- A notification about a project's task: the project and the task (its id in the task list),
-- and the question it asks the person to answer, if any — so the window groups it under the
-- project and its buttons open the task or the question.
ALTER TABLE notifications ADD COLUMN project_id INTEGER REFERENCES projects (id) ON DELETE SET NULL;
ALTER TABLE notifications ADD COLUMN project_task TEXT;
ALTER TABLE notifications ADD COLUMN checkpoint_id INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL;
