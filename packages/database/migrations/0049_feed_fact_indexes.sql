-- The change feed's indexes that serve only facts hold only facts (issue 43; docs/benchmarks.md "Issue 43").
-- Owner: packages/service-kit, as the rest of partner_feed and feed_drafts.
--
-- partner_feed_occurred served one read, a webhook replay by time (webhook-replay.ts), and feed_drafts_event one, the
-- webhooks' "is this fact still waiting for its number" (fact-handler.ts). Both read only facts (the webhooks' event
-- types: published, unpublished, media processed, report changed, avatar processed, lead received), never the
-- record changes every listing and broker write makes (FEED_RECORD_CHANGE_TYPES in packages/contracts), yet every
-- record change paid one B-tree insertion into each: one in the write's own statement (its feed draft) and one in
-- the statement that numbers it. As partial indexes they cost a record change nothing. The queries repeat the
-- predicate (FEED_FACT_PREDICATE, @pss/database/queries) so the planner can use them; a test holds both to it.
-- Expand only: neither index exists in v1.0.0 (0030 and 0033 came after it), so no previous release reads them.
-- partner_feed_event (v1.0.0's fact lookup reads it by event ID alone) stays whole: "Pending contract steps" in
-- docs/upgrades.md.
CREATE INDEX partner_feed_fact_occurred ON partner_feed (partner_id, mode, occurred_at)
  WHERE type NOT IN ('listing.created', 'listing.updated', 'listing.status_changed', 'broker.created', 'broker.updated');
DROP INDEX partner_feed_occurred;
CREATE INDEX feed_drafts_fact_event ON feed_drafts (event_id)
  WHERE type NOT IN ('listing.created', 'listing.updated', 'listing.status_changed', 'broker.created', 'broker.updated');
DROP INDEX feed_drafts_event;
