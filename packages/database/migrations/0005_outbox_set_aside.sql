-- Outbox rows the relay can never publish (larger than Kafka accepts, or refused permanently by Kafka) are set
-- aside with the reason instead of blocking every row after them; they stay until an operator re-queues or
-- deletes them. Indexes for the relay's scan of pending rows, the set-aside list, and the cleanup of sent rows.
ALTER TABLE outbox
  ADD COLUMN set_aside_at timestamptz,
  ADD COLUMN set_aside_reason text;

-- The relay reads pending rows in id order; set-aside rows leave this index.
CREATE INDEX outbox_pending ON outbox (id) WHERE published_at IS NULL AND set_aside_at IS NULL;
DROP INDEX outbox_unpublished;

CREATE INDEX outbox_set_aside ON outbox (id) WHERE set_aside_at IS NOT NULL;

-- The relay deletes sent rows older than the retention by published_at.
CREATE INDEX outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL;
