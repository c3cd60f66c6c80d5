-- Runs are numbered per workflow (#1, #2 … of that workflow), as a person counts them; the
-- global id stays the key. A trigger numbers every new run, so no insert can forget it.

ALTER TABLE runs ADD COLUMN number INTEGER;

UPDATE runs SET number = n.num
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY workflow_id ORDER BY id) AS num FROM runs) AS n
WHERE runs.id = n.id;

CREATE UNIQUE INDEX runs_number ON runs (workflow_id, number);

CREATE TRIGGER runs_numbered AFTER INSERT ON runs WHEN NEW.number IS NULL
BEGIN
    UPDATE runs
    SET number = (SELECT COALESCE(MAX(number), 0) + 1 FROM runs WHERE workflow_id = NEW.workflow_id)
    WHERE id = NEW.id;
END;
