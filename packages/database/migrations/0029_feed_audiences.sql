-- Two audiences of the change feed (docs/partner-api.md "Change feed", docs/leads.md "What a key without lead
-- tracking can observe"). A key with lead tracking reads `seq`: every event, lead.received included. A key without
-- it reads `record_seq`: the same events without lead.received, numbered on their own with no holes, so the
-- numbering cannot count leads (before, the leads were holes in `seq`). Lead events have no record_seq. Webhook
-- deliveries to an endpoint that does not carry lead data carry record_seq too.
ALTER TABLE partner_feed ADD COLUMN record_seq bigint;
CREATE UNIQUE INDEX partner_feed_record_seq ON partner_feed (partner_id, mode, record_seq) WHERE record_seq IS NOT NULL;

-- Per partner and mode, the records audience's last number and the last of its numbers retention removed.
ALTER TABLE partner_feed_heads
  ADD COLUMN last_record_seq bigint NOT NULL DEFAULT 0,
  ADD COLUMN record_pruned_through bigint NOT NULL DEFAULT 0;

-- Events numbered before this migration stay out of the records audience (their record_seq stays NULL): any
-- renumbering of them would either keep their lead holes or move the cursors readers already hold onto other
-- events (a reader would skip some). Instead the records numbering goes on after the partner's last number, and
-- everything up to that counts as removed: a reader without lead tracking that had read everything continues with
-- no change; one whose cursor is older gets 410 (reconcile, then follow from the number named), never a skip.
UPDATE partner_feed_heads SET last_record_seq = last_seq, record_pruned_through = last_seq;

-- A rolling deploy: a sequencer of the previous release may still number events after this migration, without
-- record_seq. Left so, those events would be missing from the records audience for good (its readers would skip
-- them, silently). This trigger gives such a row the next record number, under the head row the numbering pass
-- already holds, so the records numbering stays complete and consecutive. The current sequencer always sets
-- record_seq on events without lead data, so for it the trigger never fires.
CREATE FUNCTION partner_feed_record_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE partner_feed_heads SET last_record_seq = last_record_seq + 1
  WHERE partner_id = NEW.partner_id AND mode = NEW.mode
  RETURNING last_record_seq INTO NEW.record_seq;
  RETURN NEW;
END
$$;
CREATE TRIGGER partner_feed_record_seq BEFORE INSERT ON partner_feed FOR EACH ROW
  WHEN (NEW.record_seq IS NULL AND NEW.type <> 'lead.received')
  EXECUTE FUNCTION partner_feed_record_seq();
