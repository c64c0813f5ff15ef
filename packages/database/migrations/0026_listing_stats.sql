-- Per-listing buyer statistics (issue 24, part 3): page views (one per visitor per listing per UTC day) and search
-- impressions, per listing and UTC day. Inquiries are not copied here: they are counted from `leads` when read.
-- No visitor data is stored: views are deduplicated in Redis by a keyed hash whose key rotates daily.
CREATE TABLE listing_stats_daily (
  listing_id bigint NOT NULL REFERENCES listings(id) ON DELETE CASCADE,
  day date NOT NULL,
  views integer NOT NULL DEFAULT 0,
  impressions integer NOT NULL DEFAULT 0,
  PRIMARY KEY (listing_id, day)
);

-- One row per flushed batch of counts: a batch retried after an error whose commit was not seen (the connection
-- dropped after COMMIT) finds its ID here and adds nothing, so counts may lag but never double. Old IDs are
-- deleted by the flusher.
CREATE TABLE listing_stats_flushes (
  id uuid PRIMARY KEY,
  flushed_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX listing_stats_flushes_at ON listing_stats_flushes (flushed_at);

-- Inquiries per listing and day, read by the stats route.
CREATE INDEX leads_listing_created ON leads (listing_id, created_at);
