-- The change feed's retention index as a BRIN (issue 43; docs/benchmarks.md "Issue 43"). Owner: packages/service-kit
-- (the feed sequencer's retention reads it), as the rest of partner_feed.
--
-- partner_feed_sequenced_at (a B-tree on sequenced_at) served one query: the retention that deletes rows older than
-- FEED_RETENTION_DAYS, a few times an hour. Yet every numbered event paid for it: one more B-tree insertion (and
-- its WAL, with a full-page image whenever a leaf page is first touched after a checkpoint) in the statement
-- that numbers the feed, the most expensive part of the relay and sequencer's work per row. Rows are inserted in
-- sequencing order, so sequenced_at follows the table's physical order: a BRIN index (one summary per 128 pages,
-- kept by VACUUM rather than by each insert) finds the old rows as well, for a fraction of the upkeep.
-- Expand only: the previous release's retention query reads through the new index the same.
CREATE INDEX partner_feed_sequenced_brin ON partner_feed USING brin (sequenced_at);
DROP INDEX partner_feed_sequenced_at;
