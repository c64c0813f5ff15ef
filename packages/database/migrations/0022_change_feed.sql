-- The change feed (GET /partner/v1/events, docs/partner-api.md "Change feed"). Every outbox row that announces a
-- change to a partner's records is sequenced AFTER it commits, by one writer at a time (the feed sequencer,
-- packages/service-kit/src/feed-sequencer.ts, under a transaction advisory lock): it takes the committed rows not
-- sequenced yet, in outbox ID order, and gives each event the next number of its partner's (and mode's)
-- sequence. A transaction that commits late is simply not sequenced yet: when it becomes visible it gets the next
-- number, after everything sequenced before, so a reader following the sequence can never pass over it.

-- Outbox rows waiting for the sequencer. Rows from before this migration are not in the feed (NULL).
ALTER TABLE outbox ADD COLUMN feed_pending boolean;
ALTER TABLE outbox ALTER COLUMN feed_pending SET DEFAULT true;
CREATE INDEX outbox_feed_pending ON outbox (id) WHERE feed_pending;

-- One row per partner and mode: the last number given, and the last number removed by retention.
CREATE TABLE partner_feed_heads (
  partner_id uuid NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
  mode text NOT NULL,
  last_seq bigint NOT NULL,
  pruned_through bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (partner_id, mode)
);

CREATE TABLE partner_feed (
  partner_id uuid NOT NULL,
  mode text NOT NULL,
  seq bigint NOT NULL,
  type text NOT NULL,
  -- the envelope's eventId of the outbox row (several feed events may come from one row)
  event_id uuid NOT NULL,
  record_type text NOT NULL,
  version integer,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  sequenced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, mode, seq)
);
CREATE INDEX partner_feed_event ON partner_feed (event_id);
CREATE INDEX partner_feed_sequenced_at ON partner_feed (sequenced_at);
