-- Partner webhooks (docs/webhooks.md): the endpoints partners register through the API, the deliveries the
-- webhooks service makes to them with every attempt, and whether each listing is published (live for buyers and
-- in search), which the indexer records so that listing.published / listing.unpublished fire on a change only.

CREATE TABLE webhook_endpoints (
  id bigserial PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id),
  external_id text NOT NULL, -- the partner's endpointId
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  enabled boolean NOT NULL DEFAULT true,
  -- Why deliveries stopped: 'partner' (PUT enabled:false), 'gone' (the receiver answered 410), 'failing' (every
  -- attempt failed for the configured time, 5 days). disabled_reason is the sentence the partner reads.
  disabled_cause text CHECK (disabled_cause IN ('partner', 'gone', 'failing')),
  disabled_reason text,
  disabled_at timestamptz(3),
  -- Signing secrets, AES-256-GCM with WEBHOOK_SECRET_KEY: the webhooks service needs them in clear to sign, so a
  -- hash cannot do; a database dump alone does not reveal them. The previous one signs too until it expires.
  secret_encrypted text NOT NULL,
  previous_secret_encrypted text,
  previous_secret_expires_at timestamptz(3),
  -- First failed attempt since the last successful one (NULL while the endpoint answers).
  failing_since timestamptz(3),
  last_success_at timestamptz(3),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (partner_id, external_id),
  CHECK (enabled = (disabled_cause IS NULL))
);

-- One row per event and endpoint. The id is the webhook-id header, the same on every attempt.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  partner_id uuid NOT NULL,
  -- The fact's eventId (or the ping's own ID): a fact consumed twice creates no second delivery.
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  -- The exact body sent and signed on every attempt.
  payload text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  -- attempt_count when the current retry schedule began (a manual retry or a recover starts a new one).
  round_start integer NOT NULL DEFAULT 0,
  -- Pending: when the next attempt is due; while an attempt runs, when its claim expires (a killed worker's
  -- delivery is taken up again then).
  next_attempt_at timestamptz(3),
  last_status_code integer,
  last_error text,
  delivered_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_partner_created ON webhook_deliveries (partner_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_endpoint_created ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';

CREATE TABLE webhook_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  at timestamptz(3) NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text,
  PRIMARY KEY (delivery_id, attempt)
);

-- When the listing last became visible to buyers and indexed (NULL: not published). Written by the indexer with
-- the index state; a change of it is what listing.published / listing.unpublished announce. Existing rows: what
-- the index holds now, or held for the previous version of a listing that is still visible.
ALTER TABLE listings ADD COLUMN published_at timestamptz(3);
UPDATE listings SET published_at = updated_at
WHERE status IN ('FOR_SALE', 'REVIEWING_OFFERS', 'PENDING_CONTRACT', 'UNDER_CONTRACT')
  AND (index_state = 'indexed' OR (index_state = 'pending' AND indexed_version IS NOT NULL));
