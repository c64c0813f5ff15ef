-- leads.broker_id had no index: deleting a broker (the test-data purge, DELETE /partner/v1/test-data and the
-- retention job, docs/sandbox.md) makes PostgreSQL check leads' foreign key with `SELECT 1 FROM leads WHERE
-- broker_id = $1 FOR KEY SHARE`, and the purge's own NOT EXISTS does the same lookup: without this index both
-- are sequential scans of every partner's leads, once per deleted broker, while the purge holds row locks.
-- docs/benchmarks.md ("Test-data purge") has the measurement, bench/purge.ts the benchmark.
--
-- Why not CREATE INDEX CONCURRENTLY: the migration runner (packages/database/src/migrate.ts) applies each file
-- inside one transaction (with its advisory lock and the schema_migrations row), and CONCURRENTLY cannot run in
-- a transaction block. A plain CREATE INDEX blocks writes to leads (lead intake, forwarding's state updates)
-- while it builds, reads go on: about a second per million leads on the 2-core machine (bench/purge.ts reports
-- it as indexBuildMs). For a table large enough for that to matter, build it beforehand outside the runner:
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS leads_broker ON leads (broker_id);
-- and this migration then finds it and does nothing. A CONCURRENTLY build that failed leaves an INVALID index of
-- that name; it is dropped and built again here rather than silently kept.
DO $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE c.relname = 'leads_broker' AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid
  ) THEN
    DROP INDEX leads_broker;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS leads_broker ON leads (broker_id);
