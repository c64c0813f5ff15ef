-- The records numbering reveals nothing (issue 37, item 11; docs/leads.md "What a key without lead tracking can
-- observe", docs/partner-api.md "Change feed"). Owner: packages/service-kit (the feed sequencer numbers
-- partner_feed and partner_feed_heads); the webhook delivery payloads rewritten below are services/webhooks' rows.
--
-- Migration 0029 started each partner's records numbering (what keys without lead tracking read) after the
-- partner's last number of the full numbering, and counted everything up to it as removed. That number counts the
-- partner's leads up to the migration: a key without lead tracking read it in its first 410 ("Events up to sequence
-- N") or as its first number, and compared with the events it could see, it counted the leads.
--
-- Why not simply go on from the count of events such a key can see: readers of the previous release hold cursors in
-- the full numbering (v1.0.0 served it to every key, lead holes and all), up to that old last number. A records
-- numbering that went on from a smaller count would hand out numbers those old cursors already hold, and a reader
-- presenting one would be answered as if it had read those new events: a silent skip. So every partner with a feed
-- history starts its records numbering at one and the same base, 1,000,000,000,000 (the next multiple of it for
-- a partner whose old numbers reached it), above every cursor of the old numbering and equal for every partner
-- whatever its leads: it reveals nothing. Everything up to the base counts as removed, so any older cursor gets 410
-- once (reconcile, then follow from after=<base>), never a skip. A feed begun after this migration starts at 1.
--
-- Events already numbered in 0029's records numbering (a database that ran a build between 0029 and this one) keep
-- their order and get the next numbers after the base; events numbered before 0029 stay outside the records
-- numbering as 0029 left them.

-- The numbering stands still meanwhile, and nothing waits in a cycle with this migration: first the deliveries (their
-- writers hold no feed lock), then the feed sequencer's lock (packages/service-kit feed-sequencer.ts: every numbering
-- pass, this release's and the previous one's, only tries it, so none is left waiting while holding anything), then
-- the retention's. The previous release's retention takes no lock; it deletes feed rows before it updates a head
-- row, in the order this migration updates them, so the two only wait for each other, never in a cycle.
LOCK TABLE webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;
SELECT pg_advisory_xact_lock(727023);
SELECT pg_advisory_xact_lock(727024);

CREATE TEMPORARY TABLE records_base ON COMMIT DROP AS
SELECT h.partner_id, h.mode, (h.last_seq / 1000000000000 + 1) * 1000000000000 AS base
FROM partner_feed_heads h
WHERE h.last_seq > 0;

-- 0029's record numbers, renumbered in their order after the base (all above every old number: no unique clash).
UPDATE partner_feed f
SET record_seq = r.renumbered
FROM (
  SELECT f2.partner_id, f2.mode, f2.seq,
    b.base + row_number() OVER (PARTITION BY f2.partner_id, f2.mode ORDER BY f2.record_seq) AS renumbered
  FROM partner_feed f2
  JOIN records_base b ON b.partner_id = f2.partner_id AND b.mode = f2.mode
  WHERE f2.record_seq IS NOT NULL
) r
WHERE f.partner_id = r.partner_id AND f.mode = r.mode AND f.seq = r.seq;

UPDATE partner_feed_heads h
SET record_pruned_through = b.base,
  last_record_seq = b.base + (
    SELECT count(*) FROM partner_feed f
    WHERE f.partner_id = h.partner_id AND f.mode = h.mode AND f.record_seq IS NOT NULL
  )
FROM records_base b
WHERE b.partner_id = h.partner_id AND b.mode = h.mode;

-- Stored deliveries to endpoints without lead data (what such a key lists with GET /partner/v1/webhook-deliveries,
-- and what a retry or recover sends again) carry the records numbering too: the event's number now, or none for
-- an event outside it (numbered before 0029: the previous release put the full number there, lead holes and all).
-- One pass over the deliveries, joined to the feed by event (a fact has one feed event: the first, were there more).
UPDATE webhook_deliveries d
SET payload = CASE
    WHEN x.record_seq IS NULL THEN (d.payload::jsonb #- '{data,sequence}')::text
    ELSE jsonb_set(d.payload::jsonb, '{data,sequence}', to_jsonb(x.record_seq))::text
  END
FROM (
  SELECT w.id, f.record_seq
  FROM webhook_deliveries w
  JOIN webhook_endpoints e ON e.id = w.endpoint_id AND NOT e.carries_lead_data
  LEFT JOIN (
    SELECT DISTINCT ON (event_id, partner_id) event_id, partner_id, record_seq
    FROM partner_feed ORDER BY event_id, partner_id, seq
  ) f ON f.event_id = w.event_id AND f.partner_id = w.partner_id
  WHERE strpos(w.payload, '"sequence"') > 0 AND w.payload::jsonb #> '{data,sequence}' IS NOT NULL
) x
WHERE d.id = x.id;
