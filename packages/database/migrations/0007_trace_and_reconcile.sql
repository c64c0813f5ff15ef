-- A record's journey in the logs (docs/operations.md, "Following one request"): the write's request ID and its
-- W3C traceparent travel with its event. The relay sends them as Kafka headers (x-request-id, traceparent);
-- consumers put them on every log line about the record and keep them on dead letters. Nullable: rows
-- written before this migration, and writers without a request (tools), have none.
ALTER TABLE outbox
  ADD COLUMN request_id text,
  ADD COLUMN traceparent text;

-- The reconciler (indexer service) looks for listings whose index state stayed 'pending' past a threshold, or
-- whose recorded indexed version is not the current one. Few rows match at any time: a partial index keeps
-- that query from scanning every listing, at the cost of one index entry per pending write.
CREATE INDEX listings_index_unsettled ON listings (updated_at)
  WHERE index_state = 'pending' OR indexed_version IS DISTINCT FROM version;
