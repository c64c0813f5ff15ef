-- Buyer inquiries (leads): intake by the API, forwarding and counting by services/leads (docs/leads.md).

-- One row per accepted inquiry, written by the API in the same transaction as its lead.submitted outbox
-- event. Listing, broker, office and organization are copied as they were at submission, so a later broker
-- reassignment does not move past leads. The buyer's contact details are kept because forwarding needs them.
CREATE TABLE leads (
  id uuid PRIMARY KEY, -- UUIDv7 from the API
  partner_id uuid NOT NULL REFERENCES partners(id),
  listing_id bigint NOT NULL REFERENCES listings(id),
  broker_id bigint NOT NULL REFERENCES brokers(id),
  office_id integer NOT NULL REFERENCES offices(id),
  organization_id integer NOT NULL REFERENCES organizations(id),
  buyer_name text NOT NULL,
  buyer_email text NOT NULL,
  buyer_phone text,
  message text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  -- Forwarding: 'sending' is a claim taken before talking to SMTP, so a lead is e-mailed once.
  delivery_state text NOT NULL DEFAULT 'pending' CHECK (delivery_state IN ('pending', 'sending', 'sent', 'failed')),
  delivery_attempts integer NOT NULL DEFAULT 0,
  delivery_last_error text,
  delivery_next_attempt_at timestamptz(3) NOT NULL DEFAULT now(),
  delivery_claimed_at timestamptz(3),
  delivered_at timestamptz(3),
  delivered_to text
);
CREATE INDEX leads_listing ON leads (listing_id);
-- The retry sweeper's queue: only leads still waiting for an attempt.
CREATE INDEX leads_delivery_due ON leads (delivery_next_attempt_at) WHERE delivery_state IN ('pending', 'sending');

-- What lead counts read: one row per counted lead (idempotent on lead_id), with the listing, broker, office and
-- organization it belonged to when submitted. An append-only fact table without foreign keys: it holds no
-- personal data and outlives any purge of the contact details in leads.
CREATE TABLE counted_leads (
  lead_id uuid PRIMARY KEY,
  listing_id bigint NOT NULL,
  broker_id bigint NOT NULL,
  office_id integer NOT NULL,
  organization_id integer NOT NULL,
  created_at timestamptz(3) NOT NULL
);
-- Exact counts for the partial hours at the edges of a range.
CREATE INDEX counted_leads_office_created ON counted_leads (office_id, created_at);

-- Leads per office and UTC hour, day and month, updated in the same transaction as the counted_leads insert,
-- so buckets and raw rows always agree. A count over any range reads a few dozen bucket rows per office plus
-- two partial hours of raw rows. lead_count is carried in the primary key's index (INCLUDE), so counts are
-- index-only scans that never visit the scattered table rows.
CREATE TABLE lead_count_buckets (
  office_id integer NOT NULL,
  granularity text NOT NULL CHECK (granularity IN ('hour', 'day', 'month')),
  bucket_start timestamptz NOT NULL,
  lead_count bigint NOT NULL CHECK (lead_count >= 0),
  PRIMARY KEY (office_id, granularity, bucket_start) INCLUDE (lead_count)
);
