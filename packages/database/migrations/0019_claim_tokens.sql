-- Fencing tokens for claimed work (docs/leads.md, docs/media.md, docs/webhooks.md, "Claims and late writes").
-- Every claim of a lead delivery, a photo, an avatar or a webhook delivery adds one to the row's token and the
-- worker keeps the value it got; every later write of that worker (sent, retry, failed, ready, renewal) carries
-- `AND <token> = <the worker's>`. A worker whose claim ran out and was taken by another therefore changes nothing
-- when it finally finishes. The attempt counters cannot serve: media's `admin media retry` resets them, and the
-- rule that outages of our own dependencies do not spend attempts may hand an attempt back. Tokens only grow.
-- integer (not bigint): postgres.js returns it as a number; 2^31 claims of one row will not happen.
ALTER TABLE leads ADD COLUMN delivery_claim_token integer NOT NULL DEFAULT 0;
ALTER TABLE listing_photos ADD COLUMN claim_token integer NOT NULL DEFAULT 0;
ALTER TABLE brokers ADD COLUMN avatar_claim_token integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_deliveries ADD COLUMN claim_token integer NOT NULL DEFAULT 0;
