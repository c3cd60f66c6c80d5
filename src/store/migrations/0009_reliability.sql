-- An inbox item a crash interrupted is put back in line once; this counts how often it was.
ALTER TABLE inbox ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
