-- A repair whose model provider was down waits and is tried again later (issue 40): its inbox
-- item goes back in line, not before a time, counting the waits so that a provider down for
-- long ends the repair with the provider named instead of trying for ever.
ALTER TABLE inbox ADD COLUMN not_before TEXT;
ALTER TABLE inbox ADD COLUMN provider_waits INTEGER NOT NULL DEFAULT 0;
