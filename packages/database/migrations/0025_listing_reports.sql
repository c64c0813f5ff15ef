-- Processing reports (issue 24, part 2): when the index state and the buyer-facing rewrite last changed (the
-- report's step times), and the overall state last announced by listing.report.changed.
--
-- The times are stamped by a trigger, so the indexer, the reconciler and reindex need no change: any writer that
-- moves index_state / indexed_version or description_optimized stamps them. Like the index state these writes
-- leave updated_at alone, so they do not move a record in the partner's paging order.
ALTER TABLE listings
  ADD COLUMN index_state_at timestamptz(3),
  ADD COLUMN description_optimized_at timestamptz(3),
  -- The overall state the report tracker last announced (NULL: none yet), and how many changes it announced:
  -- the version of listing.report.changed, which only grows per listing.
  ADD COLUMN report_state text CHECK (report_state IN ('LIVE', 'LIVE_WITH_WARNINGS', 'PROCESSING', 'NOT_VISIBLE', 'FAILED')),
  ADD COLUMN report_version integer NOT NULL DEFAULT 0;

CREATE FUNCTION stamp_listing_report_times() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.index_state IS DISTINCT FROM OLD.index_state OR NEW.indexed_version IS DISTINCT FROM OLD.indexed_version THEN
    NEW.index_state_at := now();
  END IF;
  IF NEW.description_optimized IS DISTINCT FROM OLD.description_optimized THEN
    NEW.description_optimized_at := CASE WHEN NEW.description_optimized IS NULL THEN NULL ELSE now() END;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER listings_report_times BEFORE UPDATE OF index_state, indexed_version, description_optimized ON listings
  FOR EACH ROW EXECUTE FUNCTION stamp_listing_report_times();

-- Existing rows: the best times known.
UPDATE listings SET index_state_at = updated_at WHERE index_state <> 'pending';
UPDATE listings SET description_optimized_at = updated_at WHERE description_optimized IS NOT NULL;
