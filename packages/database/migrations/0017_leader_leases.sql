-- Leases for "one instance at a time" background work (packages/service-kit/src/leader-lease.ts): the outbox
-- relay, the media garbage collector, the search reconciler and reindex per alias. They replace session advisory
-- locks, which a transaction-pooling PgBouncer breaks (a session lock stays on whichever server connection ran
-- the statement). One row per lease; the database's clock decides when it ran out.
CREATE TABLE leader_leases (
  name text PRIMARY KEY,
  -- host:pid:random of the instance holding it (what operators see).
  holder text NOT NULL,
  acquired_at timestamptz NOT NULL,
  renewed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
