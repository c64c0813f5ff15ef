-- Buyer statistics' daily visitor keys (issue 29). Owner: services/api (the buyer statistics recorder).
-- A visitor is recognised by an HMAC, under the day's key, of the listing, its address (IPv6: /64) and its
-- User-Agent. The key used to sit in the same Redis as the hashes, so a copy of that Redis could test guessed
-- addresses against them. It lives here instead: random, created by whichever API instance needs it first (up to a
-- day ahead), shared by all of them, and deleted once its day is over, after which that day's hashes (which expire
-- from Redis within two days) cannot be linked to anyone.
CREATE TABLE listing_stats_day_keys (
  day date PRIMARY KEY,
  key bytea NOT NULL
);
COMMENT ON TABLE listing_stats_day_keys IS 'owner: services/api (the buyer statistics recorder)';
