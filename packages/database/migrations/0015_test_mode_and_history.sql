-- Test mode and change history (docs/sandbox.md).
--
-- Test mode: a pss_test_… key writes records of mode 'test', a pss_live_… key records of mode 'live'. The two
-- modes of one partner are kept apart by the mode column: the same external ID names one record per mode, every
-- partner read filters by the caller's mode, and a listing can only reference a broker of its own mode (a
-- foreign key on (broker_id, mode)). Existing rows are all live (the default).

-- A key's mode is its prefix's (pss_test_… / pss_live_…): derived, so the two can never disagree.
ALTER TABLE api_keys ADD COLUMN mode text NOT NULL
  GENERATED ALWAYS AS (CASE WHEN starts_with(key_prefix, 'pss_test_') THEN 'test' ELSE 'live' END) STORED;

ALTER TABLE brokers ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE listings ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));

-- One record per partner, mode and external ID.
ALTER TABLE brokers DROP CONSTRAINT brokers_partner_id_external_id_key;
ALTER TABLE brokers ADD CONSTRAINT brokers_partner_mode_external_id_key UNIQUE (partner_id, mode, external_id);
ALTER TABLE listings DROP CONSTRAINT listings_partner_id_external_id_key;
ALTER TABLE listings ADD CONSTRAINT listings_partner_mode_external_id_key UNIQUE (partner_id, mode, external_id);

-- A test listing can never point at a live broker, nor a live listing at a test broker.
ALTER TABLE brokers ADD CONSTRAINT brokers_id_mode_key UNIQUE (id, mode);
ALTER TABLE listings ADD CONSTRAINT listings_broker_same_mode FOREIGN KEY (broker_id, mode) REFERENCES brokers (id, mode);

-- Paging (commit-safe position and updatedSince) is per partner and mode.
DROP INDEX brokers_partner_write_position;
DROP INDEX listings_partner_write_position;
CREATE INDEX brokers_partner_write_position ON brokers (partner_id, mode, write_xid, id);
CREATE INDEX listings_partner_write_position ON listings (partner_id, mode, write_xid, id);
DROP INDEX brokers_partner_updated;
DROP INDEX listings_partner_updated;
CREATE INDEX brokers_partner_updated ON brokers (partner_id, mode, updated_at) INCLUDE (write_xid);
CREATE INDEX listings_partner_updated ON listings (partner_id, mode, updated_at) INCLUDE (write_xid);

-- The purge of test records older than the retention reads only test rows.
CREATE INDEX listings_test_updated ON listings (updated_at) WHERE mode = 'test';
CREATE INDEX brokers_test_updated ON brokers (updated_at) WHERE mode = 'test';

-- Leads of test listings are simulated (POST /partner/v1/test/listings/{id}/leads). They are never e-mailed:
-- they are stored as 'skipped', a final state the forwarder never claims. Test-mode lead counts read them
-- directly (live counts read counted_leads and its buckets, which never hold a test lead).
ALTER TABLE leads ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE leads DROP CONSTRAINT leads_delivery_state_check;
ALTER TABLE leads ADD CONSTRAINT leads_delivery_state_check CHECK (delivery_state IN ('pending', 'sending', 'sent', 'failed', 'skipped'));
ALTER TABLE leads ADD CONSTRAINT leads_test_never_sent CHECK (mode = 'live' OR delivery_state = 'skipped');
CREATE INDEX leads_test_office_created ON leads (office_id, created_at) WHERE mode = 'test';

-- Change history: one row per version a partner PUT wrote (not for identical repeats), in the same statement or
-- transaction as the change. `changes` is [{path, from, to}] with long texts truncated (docs/partner-api.md,
-- "Change history"). Rows go with their record, and are deleted after the history retention.
CREATE TABLE listing_history (
  id bigserial PRIMARY KEY,
  listing_id bigint NOT NULL REFERENCES listings(id) ON DELETE CASCADE,
  version integer NOT NULL,
  changed_at timestamptz(3) NOT NULL DEFAULT now(),
  -- api_keys.id of the key that wrote it; no foreign key: the history outlives nothing, it only names the key.
  key_id bigint,
  request_id text,
  changes jsonb NOT NULL,
  status_from text,
  status_to text
);
CREATE INDEX listing_history_listing ON listing_history (listing_id, id);
CREATE INDEX listing_history_changed_at ON listing_history (changed_at);

CREATE TABLE broker_history (
  id bigserial PRIMARY KEY,
  broker_id bigint NOT NULL REFERENCES brokers(id) ON DELETE CASCADE,
  version integer NOT NULL,
  changed_at timestamptz(3) NOT NULL DEFAULT now(),
  key_id bigint,
  request_id text,
  changes jsonb NOT NULL
);
CREATE INDEX broker_history_broker ON broker_history (broker_id, id);
CREATE INDEX broker_history_changed_at ON broker_history (changed_at);

-- The key that signs preview links of test records when PREVIEW_LINK_SECRET is not configured: created once by
-- the first API instance that needs it, then shared by all instances (a link works whichever one serves it).
CREATE TABLE preview_link_secret (
  id smallint PRIMARY KEY CHECK (id = 1),
  secret bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
