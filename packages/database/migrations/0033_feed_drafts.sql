-- Feed drafts (issue 32; docs/events.md "Change feed numbering"). Owner: packages/service-kit (the feed draft
-- builder, feed-drafts.ts, used by every outbox writer; the feed sequencer numbers and deletes the drafts).
--
-- Until now the feed sequencer found its work through outbox.feed_pending (default true), decoded each row's whole
-- envelope, joined the change history and then cleared feed_pending: a second read and an UPDATE of every
-- outbox row. Now the writer, which already knows the event (record, version, changed paths, status move), stores
-- the feed events of its outbox row here, in the same statement or transaction, small: the sequencer numbers them
-- in one set-based statement and deletes them; the outbox row is written with feed_pending NULL and never updated.
--
-- Order: outbox_id is the ID of the outbox row the draft belongs to, ordinal its place among that row's events
-- (a listing update whose status moved makes two). The sequencer takes drafts in (outbox_id, ordinal) order, the
-- order it took outbox rows before, so drafts and the outbox rows a previous release still marks feed_pending
-- (below) are numbered in one order: per record, version order.
CREATE TABLE feed_drafts (
  outbox_id bigint NOT NULL,
  ordinal smallint NOT NULL,
  partner_id uuid NOT NULL,
  mode text NOT NULL,
  type text NOT NULL,
  event_id uuid NOT NULL,
  record_type text NOT NULL,
  version integer,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  PRIMARY KEY (outbox_id, ordinal)
);
-- The webhooks fan-out asks whether a fact is still waiting for its number (fact-handler.ts).
CREATE INDEX feed_drafts_event ON feed_drafts (event_id);
COMMENT ON TABLE feed_drafts IS 'owner: packages/service-kit (written with each outbox row by its writer, feed-drafts.ts; numbered and deleted by createFeedSequencer under its advisory lock)';

-- Rolling upgrade (expand/contract, docs/upgrades.md): outbox.feed_pending and its default stay. An API of the
-- previous release (v1.0.0) still writes rows with feed_pending true during the upgrade and after a rollback; the
-- sequencer of this release turns those into drafts under its lock before numbering (a rare fallback), and its
-- writers set feed_pending NULL explicitly. From v1.2.0 on, no code needs to read feed_pending (v1.1.0 writes none
-- and drains what v1.0.0 left); the column, its default and outbox_feed_pending may then be dropped in v1.3.0,
-- marked "-- contract: outbox.feed_pending, unused since v1.2.0".
