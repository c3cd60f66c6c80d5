-- Healing a person can trust (#15).

-- A tier's sampling temperature; NULL: the caller's default (0.1 for repairs).
ALTER TABLE tiers ADD COLUMN temperature REAL;
