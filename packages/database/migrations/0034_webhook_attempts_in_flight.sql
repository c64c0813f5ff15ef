-- Webhook fairness that a retry cannot break, and one re-send budget (issue 37; docs/webhooks.md "Fair delivery"
-- and "Re-sending").
--
-- Attempts that hold a worker, one row each, apart from the delivery's own state. Before, an attempt counted as in
-- flight through its delivery's row (pending, claimed, lease running), so anything that changed that row (a
-- partner's retry or recover, a disable that fails the pending deliveries, a deletion) made an attempt still on the
-- wire stop counting, and the caps handed its slot out again. A row here is written by the claim that starts the
-- attempt and removed by the worker when the attempt ends (recorded, fenced out or postponed alike); a worker that
-- dies leaves it to expire at the claim's lease (held_until). Nothing else touches it, so the per-endpoint and
-- per-partner caps count every attempt that holds a worker, and a delivery with an attempt here is not claimed
-- again (a retry of a delivery in flight waits for that attempt). No foreign keys: an attempt to an endpoint
-- deleted meanwhile still holds a worker, and still counts for its partner. During a rolling upgrade the previous
-- release's worker writes no rows here (it counts claimed_at, which this release's claim still sets), so for those
-- minutes each release's caps count only its own attempts.
-- lead_data: the endpoint carried lead data when claimed. The caps per partner count each audience on its own
-- (endpoints with lead data, the others), so no attempt to a lead endpoint takes capacity a key without lead
-- tracking could observe (docs/leads.md, "What a key without lead tracking can observe").
CREATE TABLE webhook_attempts_in_flight (
  delivery_id uuid NOT NULL,
  claim_token integer NOT NULL,
  endpoint_id bigint NOT NULL,
  partner_id uuid NOT NULL,
  lead_data boolean NOT NULL,
  held_until timestamptz(3) NOT NULL,
  PRIMARY KEY (delivery_id, claim_token)
);
CREATE INDEX webhook_attempts_in_flight_held_until ON webhook_attempts_in_flight (held_until);
COMMENT ON TABLE webhook_attempts_in_flight IS 'owner: services/webhooks (the delivery worker: written by the claim, removed when the attempt ends)';

-- The re-send ledger: webhook_replays (migration 0030) now records every re-send a partner asks for, not only
-- replays: retry, recover, replay and test (a ping) draw from one daily budget per partner and audience. kind says
-- which; a row of the previous release is a replay.
ALTER TABLE webhook_replays ADD COLUMN kind text NOT NULL DEFAULT 'replay'
  CHECK (kind IN ('replay', 'retry', 'recover', 'test'));
CREATE INDEX webhook_replays_partner_audience_created ON webhook_replays (partner_id, lead_data, created_at);
COMMENT ON TABLE webhook_replays IS 'owner: services/api (the re-send ledger: retry, recover, replay and test of a partner''s webhooks, for the daily re-send budget; rows older than a day are deleted by the partner''s next re-send)';
