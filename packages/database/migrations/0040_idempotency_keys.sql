-- Idempotency keys (issue 37, item 4; docs/partner-api.md "Idempotency-Key"). Owner: services/api (the idempotency
-- layer, http/idempotency.ts). A POST that carries a key (the Idempotency-Key header; the inquiry form's hidden
-- field) is answered once: the row is inserted in the transaction of the request's effect, with the answer, so a
-- request the balancer or the client sends again finds either nothing (the first left no trace: it runs now) or the
-- answer to give again. A second request with the same key waits on the first's uncommitted row, never runs twice.
-- Rows older than IDEMPOTENCY_KEY_RETENTION_HOURS are ignored and deleted by the retention job.
CREATE TABLE idempotency_keys (
  -- Whose key it is: 'k:<api key id>' for a partner's key, 'a:<address bucket>' for a buyer (IPv6: its /64).
  scope text NOT NULL,
  idempotency_key text NOT NULL,
  -- SHA-256 of the method, path and query, and body: the same key with another request is refused (422).
  fingerprint bytea NOT NULL,
  status smallint NOT NULL,
  -- The answer's JSON body; encrypted with the webhook secret key (WEBHOOK_SECRET_KEY) when it holds a secret.
  body text NOT NULL,
  sealed boolean NOT NULL DEFAULT false,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
COMMENT ON TABLE idempotency_keys IS 'owner: services/api (the idempotency layer: the answers to POSTs sent with a key)';
