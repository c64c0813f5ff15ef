-- Saved searches with e-mail alerts (issue 41; docs/buyers-and-search.md, "Saved searches"). Owned by
-- services/marketplace, which takes the saves, confirms them (double opt-in), composes the confirmation and the daily
-- digest e-mails and unsubscribes; services/leads sends the composed mail through the same SMTP relay as the leads.
-- An address is kept only while a search of its exists: the last search's unsubscribe deletes it. Expand only.

CREATE TABLE saved_search_subscribers (
  id bigserial PRIMARY KEY,
  -- As the buyer typed it (where the mail goes) and folded (one subscriber per address, whatever its case).
  email text NOT NULL,
  email_key text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE saved_search_subscribers IS 'owner: services/marketplace (saved searches: an address, kept while one of its searches exists)';

CREATE TABLE saved_searches (
  id bigserial PRIMARY KEY,
  subscriber_id bigint NOT NULL REFERENCES saved_search_subscribers(id) ON DELETE CASCADE,
  -- The search's parameters as its URL has them (the page's form fields), and the same as one canonical key.
  query jsonb NOT NULL,
  query_key text NOT NULL,
  -- What the search is, in words, for the e-mails ("Bakery in TX, within 25 mi of Austin, TX").
  label text NOT NULL,
  -- Until confirmed: the SHA-256 of the confirmation link's token (the token itself is only in the e-mail).
  confirm_token_hash bytea UNIQUE,
  -- In every e-mail's one-click unsubscribe link (RFC 8058); it only ever removes this search.
  unsubscribe_token text NOT NULL UNIQUE,
  confirmed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Confirmed searches: listings listed or price-reduced after `alerted_through` go into the next digest, due at
  -- `next_digest_at`.
  alerted_through timestamptz,
  next_digest_at timestamptz,
  UNIQUE (subscriber_id, query_key)
);
CREATE INDEX saved_searches_due ON saved_searches (next_digest_at) WHERE confirmed_at IS NOT NULL;
CREATE INDEX saved_searches_pending ON saved_searches (created_at) WHERE confirmed_at IS NULL;
COMMENT ON TABLE saved_searches IS 'owner: services/marketplace (saves, confirms, digests and unsubscribes)';

CREATE TABLE saved_search_mail (
  id bigserial PRIMARY KEY,
  saved_search_id bigint NOT NULL REFERENCES saved_searches(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('confirmation', 'digest', 'notice')),
  recipient text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  -- The RFC 8058 one-click unsubscribe URL (List-Unsubscribe, with List-Unsubscribe-Post).
  unsubscribe_url text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Delivery, by services/leads: claimed, sent (the row is deleted), retried later or given up.
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claim_token uuid,
  claimed_until timestamptz,
  last_error text
);
CREATE INDEX saved_search_mail_due ON saved_search_mail (next_attempt_at);
COMMENT ON TABLE saved_search_mail IS 'owner: services/marketplace (composes each message); services/leads: attempts, next_attempt_at, claim_token, claimed_until, last_error, and deleting a row once sent or given up (delivery through the SMTP relay), claim-fenced';
