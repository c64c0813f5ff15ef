-- Metrics (docs/operations.md, "Metrics"): gauges read when Prometheus scrapes count the images and lead
-- deliveries that have not settled, by state and failure reason. These partial indexes hold only those rows
-- (a few, next to the many settled ones), so each count is an index-only scan of them, never a table scan.
-- Settled rows ('ready' images, 'sent' leads) are counted by the services' counters instead.
CREATE INDEX listing_photos_unsettled ON listing_photos (state, failure_reason) WHERE state <> 'ready';
CREATE INDEX brokers_avatar_unsettled ON brokers (avatar_state, avatar_failure_reason) WHERE avatar_state IN ('pending', 'failed');
CREATE INDEX leads_delivery_unsettled ON leads (delivery_state) WHERE delivery_state <> 'sent';
