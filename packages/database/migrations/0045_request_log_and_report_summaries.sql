-- What the partner portal (issue 42; docs/portal.md) reads beyond the records: the partner API's request log and its
-- daily counts, and a narrow summary of each listing's processing report for the overview and the listing filters.

-- The request log (owner: services/api, its request-log writer; docs/portal.md "API requests"). One row per partner
-- API request a key authenticated (429s included): time, key, method, path and query, status, duration, request ID,
-- and for a 4xx the error answer the partner got. Never a request body, never a successful answer (which may hold a
-- secret: a webhook endpoint's signing secret), never a key. The API writes it in batches off the request path.
--
-- Bounded to 7 days by a ring of nine daily partitions: slot = (UTC day number) mod 9, computed by the writer. The
-- API's retention job empties the slot of tomorrow (the day eight days ago, wholly older than 7 days) with TRUNCATE,
-- so keeping 7 days costs no DELETE and no vacuum, whatever the volume. Partitions are made here once and never
-- added or dropped.
CREATE TABLE api_request_log (
  slot smallint NOT NULL CHECK (slot BETWEEN 0 AND 8),
  at timestamptz(3) NOT NULL,
  partner_id uuid NOT NULL,
  mode text NOT NULL,
  key_id bigint NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  status smallint NOT NULL,
  duration_ms real NOT NULL,
  request_id text NOT NULL,
  error jsonb
) PARTITION BY LIST (slot);
CREATE TABLE api_request_log_0 PARTITION OF api_request_log FOR VALUES IN (0);
CREATE TABLE api_request_log_1 PARTITION OF api_request_log FOR VALUES IN (1);
CREATE TABLE api_request_log_2 PARTITION OF api_request_log FOR VALUES IN (2);
CREATE TABLE api_request_log_3 PARTITION OF api_request_log FOR VALUES IN (3);
CREATE TABLE api_request_log_4 PARTITION OF api_request_log FOR VALUES IN (4);
CREATE TABLE api_request_log_5 PARTITION OF api_request_log FOR VALUES IN (5);
CREATE TABLE api_request_log_6 PARTITION OF api_request_log FOR VALUES IN (6);
CREATE TABLE api_request_log_7 PARTITION OF api_request_log FOR VALUES IN (7);
CREATE TABLE api_request_log_8 PARTITION OF api_request_log FOR VALUES IN (8);
-- Newest first per partner and mode; errors apart, as the portal filters them most; by path prefix (a listing's
-- requests: /partner/v1/listings/<its ID>), where the planner reads the few matching rows instead of every request.
CREATE INDEX api_request_log_partner_at ON api_request_log (partner_id, mode, at DESC);
CREATE INDEX api_request_log_partner_errors ON api_request_log (partner_id, mode, at DESC) WHERE status >= 400;
CREATE INDEX api_request_log_partner_path ON api_request_log (partner_id, mode, path text_pattern_ops);
COMMENT ON TABLE api_request_log IS 'owner: services/api (the request-log writer appends; the retention job empties the partition of the day that left the 7 days)';

-- Requests per partner, mode and UTC day by outcome: the overview's error rate over 7 days without counting the log.
-- Added to by the same batches as the log; days older than 30 are deleted by the retention job.
CREATE TABLE api_request_daily (
  partner_id uuid NOT NULL,
  mode text NOT NULL,
  day date NOT NULL,
  requests integer NOT NULL DEFAULT 0,
  client_errors integer NOT NULL DEFAULT 0,
  server_errors integer NOT NULL DEFAULT 0,
  PRIMARY KEY (partner_id, mode, day)
);
COMMENT ON TABLE api_request_daily IS 'owner: services/api (the request-log writer)';

-- Each listing's report as the report tracker last computed it (owner: services/webhooks, the report tracker, in the
-- transaction that locks the listing): what the portal's listings list shows (external ID, title, status, overall
-- state, quality score, warning codes, broker, last write). A narrow copy, so the portal's overview aggregates
-- 100,000 listings and its list filters and searches them without reading the wide listings rows; the listing's own
-- page computes its report live.
CREATE TABLE listing_report_summaries (
  listing_id bigint PRIMARY KEY REFERENCES listings(id) ON DELETE CASCADE,
  partner_id uuid NOT NULL,
  mode text NOT NULL,
  external_id text NOT NULL,
  title text,
  broker_id bigint NOT NULL,
  status text NOT NULL,
  state text NOT NULL,
  score smallint NOT NULL,
  warnings text[] NOT NULL,
  -- listings.updated_at of the version summarized: the list's order, newest write first.
  updated_at timestamptz(3) NOT NULL,
  computed_at timestamptz(3) NOT NULL DEFAULT now()
);
-- The list's order; its rare filters (a processing state such as FAILED, one broker, one warning code) each have an
-- index of their own, so a filter that matches 1 listing in 1,000 reads those and not the partner's whole list.
CREATE INDEX listing_report_summaries_partner ON listing_report_summaries (partner_id, mode, updated_at DESC, listing_id DESC);
CREATE INDEX listing_report_summaries_state ON listing_report_summaries (partner_id, mode, state, updated_at DESC, listing_id DESC);
CREATE INDEX listing_report_summaries_broker ON listing_report_summaries (broker_id, updated_at DESC, listing_id DESC);
CREATE INDEX listing_report_summaries_warnings ON listing_report_summaries USING gin (warnings);
COMMENT ON TABLE listing_report_summaries IS 'owner: services/webhooks (the report tracker)';

-- Existing listings get their summary from the tracker's background pass: every broker's listings once.
INSERT INTO report_recompute_brokers (broker_id) SELECT id FROM brokers ON CONFLICT (broker_id) DO NOTHING;
