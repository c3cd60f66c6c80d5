-- A provider's name as the person wrote it ("My models"); `name` stays its short unique key
-- ("my-models") for tiers and the CLI. Empty for providers saved before: the key is shown.
ALTER TABLE providers ADD COLUMN title TEXT;
