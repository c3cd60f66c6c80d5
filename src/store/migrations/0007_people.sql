-- For people who do not live in a terminal: a notification can be put away one by one, and a
-- checkpoint keeps the title that fits what happened (not only its trigger's).

ALTER TABLE notifications ADD COLUMN dismissed_at TEXT;
ALTER TABLE checkpoints ADD COLUMN title TEXT;
