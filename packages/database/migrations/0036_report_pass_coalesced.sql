-- A broker's report pass is no longer restarted by each new event for the broker (issue 37; docs/webhooks.md "The
-- report tracker"). Restarting from the first listing meant a broker changed every second recomputed its first
-- pages forever and its later listings never got listing.report.changed. Now an event during a pass sets again:
-- the pass goes on from where it is to the broker's last listing, then runs once more from the first; any number of
-- events meanwhile coalesce into that one further pass. Every listing is recomputed after the last event within at
-- most two passes. The previous release's handler still resets after_listing_id (a restart, as before).
ALTER TABLE report_recompute_brokers ADD COLUMN again boolean NOT NULL DEFAULT false;
