-- Brokers whose listings' processing reports wait to be recomputed (docs/webhooks.md, "The report tracker").
-- Owner: services/webhooks (the report tracker). A broker event used to recompute every listing of the broker
-- inside the consumer's handler, unbounded: now the handler only records the broker here (one row, whatever the
-- number of listings) and a background pass works through the broker's listings in pages keyed by listing ID,
-- keeping its place in after_listing_id. A new event for a broker mid-pass starts it again from the first listing
-- (what the event changed concerns them all).
CREATE TABLE report_recompute_brokers (
  broker_id bigint PRIMARY KEY REFERENCES brokers (id) ON DELETE CASCADE,
  after_listing_id bigint NOT NULL DEFAULT 0,
  requested_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

COMMENT ON TABLE report_recompute_brokers IS 'owner: services/webhooks (the report tracker''s pending broker passes)';
