-- Webhook fairness (issue 29; docs/webhooks.md "Fair delivery" and "Replay"): one partner's slow receiver or
-- replay cannot hold back other partners' deliveries, and replay is bounded. Owners: services/webhooks claims
-- (claimed_at, webhook_endpoint_turns); services/api replays (replay_id, webhook_replays) and, with retry and
-- recover, clears claimed_at when it makes a delivery due again (and takes a new claim token, fencing the claim).

-- When the attempt in flight was claimed; NULL when none is. In flight = pending, claimed, lease not run out
-- (next_attempt_at > now()): the claim query counts these per endpoint and per partner to bound them.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_at timestamptz(3);
-- The replay that queued the delivery (webhook_replays.id); NULL once a retry or recover re-queues it. An
-- endpoint with a pending delivery queued by a replay has a replay running: a second one answers 429.
ALTER TABLE webhook_deliveries ADD COLUMN replay_id uuid;

-- The claim query walks endpoints and takes each one's oldest due deliveries (at most its free slots).
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (endpoint_id) WHERE status = 'pending' AND claimed_at IS NOT NULL;
CREATE INDEX webhook_deliveries_replaying ON webhook_deliveries (endpoint_id) WHERE status = 'pending' AND replay_id IS NOT NULL;

-- When each endpoint was last given a claim: the least recently served endpoint (and partner) goes first.
-- A table of its own, so claiming never writes (or waits on) the partner's endpoint rows.
CREATE TABLE webhook_endpoint_turns (
  endpoint_id bigint PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  served_at timestamptz(3) NOT NULL
);
COMMENT ON TABLE webhook_endpoint_turns IS 'owner: services/webhooks (the delivery worker''s claim query)';

-- Replays of the last 24 hours, for the partner's daily budget. No foreign key: deleting the endpoint does not give
-- the budget back. lead_data: the endpoint carried lead data then; a key without lead tracking does not count
-- those (it must not learn of them), so its budget is the endpoints it can see.
CREATE TABLE webhook_replays (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL,
  endpoint_id bigint NOT NULL,
  lead_data boolean NOT NULL,
  queued integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhook_replays_partner_created ON webhook_replays (partner_id, created_at);
COMMENT ON TABLE webhook_replays IS 'owner: services/api (POST /webhook-endpoints/{id}/replay; rows older than a day are deleted by the next replay of the partner)';

-- Replay by time (since/until) reads the partner's and mode's feed by occurred_at, not all of its 35 days.
CREATE INDEX partner_feed_occurred ON partner_feed (partner_id, mode, occurred_at);
