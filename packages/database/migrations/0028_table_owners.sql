-- Table ownership (issue 22; docs/architecture.md, "Who owns which table"): one workspace writes each table, or
-- each column group where two must. Recorded in the schema itself, as table comments, so `\dt+` in psql and
-- packages/database/test/table-owners.test.ts see it. Metadata only: no table, row or privilege changes.
--
-- Why here and not in the headers of 0001-0026: the migrator refuses a migration whose file changed after it was
-- applied (the checksum covers the whole file, comments included), so editing old headers would stop every existing
-- database from migrating. New migrations say their tables' owners in their own header and COMMENT ON their new
-- tables the same way (the test fails for a table without one).
--
-- Form: 'owner: <workspace>[; <other workspace>: <columns> (<why>)]'.

COMMENT ON TABLE schema_migrations IS 'owner: packages/database (the migrator)';

COMMENT ON TABLE partners IS 'owner: services/api (partner-admin, run by the admin CLI)';
COMMENT ON TABLE organizations IS 'owner: services/api (partner-admin, run by the admin CLI)';
COMMENT ON TABLE offices IS 'owner: services/api (partner-admin, run by the admin CLI)';
COMMENT ON TABLE api_keys IS 'owner: services/api (partner-admin issues and revokes; the authenticator stamps last_used_at)';
COMMENT ON TABLE preview_link_secret IS 'owner: services/api';

COMMENT ON TABLE brokers IS 'owner: services/api; services/media: avatar_* processing columns (attempts, claim, variants, dimensions, state pending to ready/failed), claim-fenced';
COMMENT ON TABLE broker_licenses IS 'owner: services/api';
COMMENT ON TABLE broker_service_areas IS 'owner: services/api';
COMMENT ON TABLE broker_history IS 'owner: services/api';

COMMENT ON TABLE listings IS 'owner: services/api; services/indexer: index_state, indexed_version, published_at, description_optimized (what the index holds); services/webhooks: report_state, report_version (the last report announced)';
COMMENT ON TABLE listing_photos IS 'owner: services/api (rows, url, sort_key); services/media: processing columns (state pending to ready/failed, attempts, claim, variants, dimensions, errors), claim-fenced';
COMMENT ON TABLE listing_history IS 'owner: services/api';
COMMENT ON TABLE listing_status_history IS 'owner: services/api';
COMMENT ON TABLE listing_stats_daily IS 'owner: services/api (the buyer statistics recorder)';
COMMENT ON TABLE listing_stats_flushes IS 'owner: services/api (the buyer statistics recorder)';

COMMENT ON TABLE leads IS 'owner: services/api (intake inserts); services/leads: delivery_* columns (forwarding by e-mail), claim-fenced';
COMMENT ON TABLE counted_leads IS 'owner: services/leads';
COMMENT ON TABLE lead_count_buckets IS 'owner: services/leads';

COMMENT ON TABLE webhook_endpoints IS 'owner: services/api (the partner''s configuration); services/webhooks: failing_since, last_success_at and disabling a failing endpoint';
COMMENT ON TABLE webhook_deliveries IS 'owner: services/webhooks; services/api: pings and replays (inserts), redelivery (back to pending) and failing pending deliveries of an endpoint the partner disables, each on a partner request';
COMMENT ON TABLE webhook_attempts IS 'owner: services/webhooks';

COMMENT ON TABLE outbox IS 'owner: services/api (the outbox relay sends and sets aside rows); appended by every service in the transaction of the state change it announces (the transactional outbox)';
COMMENT ON TABLE partner_feed IS 'owner: packages/service-kit (createFeedSequencer, run by services/api beside the outbox relay and by services/webhooks before a delivery; one pass at a time under one advisory lock)';
COMMENT ON TABLE partner_feed_heads IS 'owner: packages/service-kit (createFeedSequencer, run by services/api beside the outbox relay and by services/webhooks before a delivery; one pass at a time under one advisory lock)';
COMMENT ON TABLE leader_leases IS 'owner: packages/service-kit (createLeaderLease; each service holds only its own leases)';
