-- Partners, their keys, organizations and offices, brokers, listings, and the transactional outbox.

CREATE TABLE partners (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Keys are stored only as SHA-256 hashes; key_prefix lets ops tell keys apart without the secret.
CREATE TABLE api_keys (
  id bigserial PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id),
  key_hash bytea NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  lead_tracking boolean NOT NULL DEFAULT false,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_partner ON api_keys (partner_id);

CREATE TABLE organizations (
  id serial PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX organizations_partner ON organizations (partner_id);

CREATE TABLE offices (
  id serial PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations(id),
  name text NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX offices_organization ON offices (organization_id);
CREATE UNIQUE INDEX offices_one_default ON offices (organization_id) WHERE is_default;

CREATE TABLE brokers (
  id bigserial PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id),
  external_id text NOT NULL,
  office_id integer NOT NULL REFERENCES offices(id),
  name text NOT NULL,
  email text NOT NULL,
  phone text,
  avatar_url text,
  forwarding_email text,
  -- bio, website, linkedInUrl: shown as given, never filtered or joined.
  profile jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Background avatar processing (media service).
  avatar_state text CHECK (avatar_state IN ('pending', 'ready', 'failed')),
  avatar_failure_reason text,
  avatar_warning text,
  avatar_width integer,
  avatar_height integer,
  avatar_variants jsonb,
  version integer NOT NULL DEFAULT 1,
  -- SHA-256 of the canonical record: an identical repeat is detected without comparing field by field.
  content_hash bytea NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (partner_id, external_id)
);
CREATE INDEX brokers_partner_updated ON brokers (partner_id, updated_at, id);
CREATE INDEX brokers_office ON brokers (office_id);

CREATE TABLE broker_licenses (
  broker_id bigint NOT NULL REFERENCES brokers(id) ON DELETE CASCADE,
  position integer NOT NULL,
  license_number text,
  state text,
  country text,
  PRIMARY KEY (broker_id, position)
);

CREATE TABLE broker_service_areas (
  broker_id bigint NOT NULL REFERENCES brokers(id) ON DELETE CASCADE,
  position integer NOT NULL,
  city text,
  county text,
  state text,
  country text,
  PRIMARY KEY (broker_id, position)
);

CREATE TABLE listings (
  id bigserial PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id),
  external_id text NOT NULL,
  broker_id bigint NOT NULL REFERENCES brokers(id),
  status text NOT NULL CHECK (status IN ('DRAFT', 'FOR_SALE', 'REVIEWING_OFFERS', 'PENDING_CONTRACT', 'UNDER_CONTRACT', 'SOLD', 'ARCHIVED')),
  business_type text NOT NULL,
  title text,
  description text,
  description_optimized text,
  established_at timestamptz,
  street_address1 text,
  city text NOT NULL,
  state text NOT NULL,
  postal_code text,
  country text NOT NULL,
  visibility text NOT NULL CHECK (visibility IN ('SHOW_FULL_ADDRESS', 'SHOW_CITY_STATE', 'SHOW_STATE_ONLY')),
  -- Nested partner objects merged field by field; searched in OpenSearch, never filtered here.
  financials jsonb,
  property jsonb,
  financing jsonb,
  version integer NOT NULL DEFAULT 1,
  content_hash bytea NOT NULL,
  index_state text NOT NULL DEFAULT 'pending' CHECK (index_state IN ('pending', 'indexed', 'removed')),
  indexed_version integer,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (partner_id, external_id)
);
CREATE INDEX listings_partner_updated ON listings (partner_id, updated_at, id);
CREATE INDEX listings_broker ON listings (broker_id);

CREATE TABLE listing_photos (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings(id) ON DELETE CASCADE,
  url text NOT NULL,
  sort_key integer NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ready', 'failed')),
  failure_reason text,
  warning text,
  width integer,
  height integer,
  variants jsonb,
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (listing_id, url)
);

CREATE TABLE listing_status_history (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings(id) ON DELETE CASCADE,
  from_status text,
  to_status text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX listing_status_history_listing ON listing_status_history (listing_id, id);

-- Transactional outbox: written in the same transaction as the change it announces.
CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  topic text NOT NULL,
  message_key text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
