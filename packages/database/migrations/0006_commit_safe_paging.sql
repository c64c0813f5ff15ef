-- Commit-safe paging position for brokers and listings (docs/partner-api.md, "Paging and reconciliation").
--
-- updated_at is the writing transaction's start time: a write that commits after a reader paged past its
-- timestamp would never be returned. write_xid is the ID of the transaction that last wrote the row (inserted
-- it or set updated_at). Readers page in (write_xid, id) order and return only rows whose write_xid is older
-- than the oldest transaction still running (their snapshot's xmin): every transaction that can still commit
-- has an ID at or above that horizon, so nothing can appear behind a reader's position later.

-- Rows written before this migration are all committed: position 0 (then by id).
ALTER TABLE brokers ADD COLUMN write_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE listings ADD COLUMN write_xid xid8 NOT NULL DEFAULT '0';

-- A trigger, so every writer (API, admin CLI, tools) stamps it; writes that leave updated_at alone (media
-- and index state) do not move a record.
CREATE FUNCTION stamp_write_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.write_xid := pg_current_xact_id();
  RETURN NEW;
END
$$;

CREATE TRIGGER brokers_write_xid BEFORE INSERT OR UPDATE OF updated_at ON brokers
  FOR EACH ROW EXECUTE FUNCTION stamp_write_xid();
CREATE TRIGGER listings_write_xid BEFORE INSERT OR UPDATE OF updated_at ON listings
  FOR EACH ROW EXECUTE FUNCTION stamp_write_xid();

CREATE INDEX brokers_partner_write_position ON brokers (partner_id, write_xid, id);
CREATE INDEX listings_partner_write_position ON listings (partner_id, write_xid, id);

-- updatedSince: where a pass starts (the lowest position among rows updated since then), read from the index alone.
DROP INDEX brokers_partner_updated;
DROP INDEX listings_partner_updated;
CREATE INDEX brokers_partner_updated ON brokers (partner_id, updated_at) INCLUDE (write_xid);
CREATE INDEX listings_partner_updated ON listings (partner_id, updated_at) INCLUDE (write_xid);
