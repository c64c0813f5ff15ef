-- The records audience's "removed through" stays true whichever release prunes (issue 37, item 12; docs/upgrades.md
-- "Pending contract steps"). Owner: packages/service-kit (the feed sequencer's retention raises both numbers).
--
-- A previous release's retention (v1.0.0, still running during a rolling upgrade or again after a rollback) deletes
-- expired events and raises only pruned_through: it does not know record_pruned_through. Left so, a key without lead
-- tracking whose cursor points into the removed events would get a 200 that silently starts after them, instead of
-- its 410. This trigger raises record_pruned_through with pruned_through, in the same UPDATE, from the events that
-- are left: the records numbering follows the full numbering's order, so every record event numbered at or below
-- pruned_through lies before the first record event kept after it; with none kept after it, everything numbered so
-- far is gone. The current retention raises both itself; for it the trigger agrees (greatest of the two). What a
-- previous release pruned before this trigger existed needs no catching up: 0037 set every head with history to
-- its base, above every number removed before it.
CREATE FUNCTION partner_feed_record_pruned_through() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.record_pruned_through := greatest(
    NEW.record_pruned_through,
    coalesce(
      (SELECT f.record_seq - 1 FROM partner_feed f
       WHERE f.partner_id = NEW.partner_id AND f.mode = NEW.mode AND f.seq > NEW.pruned_through
         AND f.record_seq IS NOT NULL
       ORDER BY f.seq LIMIT 1),
      NEW.last_record_seq
    )
  );
  RETURN NEW;
END
$$;
CREATE TRIGGER partner_feed_record_pruned_through BEFORE UPDATE OF pruned_through ON partner_feed_heads
  FOR EACH ROW WHEN (NEW.pruned_through > OLD.pruned_through)
  EXECUTE FUNCTION partner_feed_record_pruned_through();
