-- A job whose worker stops while one of OUR dependencies is down (object store, PostgreSQL) is given back without
-- spending its attempt (docs/media.md, "Our outages are not the image's"): a photo or avatar can then be pending
-- with attempts 0 and a last error, due for the retry loop. Its partial indexes take those rows in too.
DROP INDEX listing_photos_retry_due;
CREATE INDEX listing_photos_retry_due ON listing_photos (not_before) WHERE state = 'pending' AND (attempts > 0 OR last_error IS NOT NULL);
DROP INDEX brokers_avatar_retry_due;
CREATE INDEX brokers_avatar_retry_due ON brokers (avatar_not_before) WHERE avatar_state = 'pending' AND (avatar_attempts > 0 OR avatar_last_error IS NOT NULL);
