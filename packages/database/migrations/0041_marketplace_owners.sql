-- The marketplace becomes a service of its own (issue 41; docs/architecture.md, "Who owns which table"): the tables
-- buyers' traffic writes change owners. Metadata only: no table, row or privilege changes.
--
-- services/marketplace now writes the leads it takes in (the API still inserts a test key's simulated leads and
-- deletes test records' leads), and the buyer statistics (views, impressions, the daily visitor keys). The answers
-- kept for Idempotency-Key and the preview-link key are written by @pss/http-kit's code, which both HTTP services run.

COMMENT ON TABLE leads IS 'owner: services/marketplace (intake inserts); services/api: a test key''s simulated leads (test mode) and deleting test records'' leads; services/leads: delivery_* columns (forwarding by e-mail), claim-fenced';
COMMENT ON TABLE listing_stats_daily IS 'owner: services/marketplace (the buyer statistics recorder)';
COMMENT ON TABLE listing_stats_flushes IS 'owner: services/marketplace (the buyer statistics recorder)';
COMMENT ON TABLE listing_stats_day_keys IS 'owner: services/marketplace (the buyer statistics recorder: the day''s visitor key)';
COMMENT ON TABLE idempotency_keys IS 'owner: packages/http-kit (the idempotency layer, in the API and the marketplace: the answers to POSTs sent with a key); services/api: the retention job deletes expired ones';
COMMENT ON TABLE preview_link_secret IS 'owner: packages/http-kit (preview links: the key is made by whichever service, API or marketplace, needs it first)';
