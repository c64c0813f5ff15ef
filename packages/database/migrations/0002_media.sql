-- Media service bookkeeping: bounded retries with a claim (lease) per image, and the stored file names each
-- record references, so the garbage collector can tell which files are still in use.

ALTER TABLE listing_photos
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  -- While pending: a claim's lease, or the earliest time of the next retry.
  ADD COLUMN not_before timestamptz,
  ADD COLUMN last_error text,
  ADD COLUMN media_names text[];

-- The API resets the avatar_* columns when the URL changes; avatar_attempt_url tells whose attempts these are.
ALTER TABLE brokers
  ADD COLUMN avatar_attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN avatar_attempt_url text,
  ADD COLUMN avatar_not_before timestamptz,
  ADD COLUMN avatar_last_error text,
  ADD COLUMN avatar_media_names text[];

CREATE INDEX listing_photos_retry_due ON listing_photos (not_before) WHERE state = 'pending' AND attempts > 0;
CREATE INDEX brokers_avatar_retry_due ON brokers (avatar_not_before) WHERE avatar_state = 'pending' AND avatar_attempts > 0;
CREATE INDEX listing_photos_media_names ON listing_photos USING gin (media_names);
CREATE INDEX brokers_avatar_media_names ON brokers USING gin (avatar_media_names);
