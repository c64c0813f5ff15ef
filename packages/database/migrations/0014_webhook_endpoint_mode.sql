-- Webhook endpoints belong to a mode like the records they hear about (docs/sandbox.md, docs/webhooks.md): an
-- endpoint created with a test key (pss_test_…) receives only test records' events, one created with a live key
-- only live ones, and each key sees and manages only the endpoints of its own mode. The same endpointId names one
-- endpoint per mode. Existing endpoints are live (the default).
ALTER TABLE webhook_endpoints ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_partner_id_external_id_key;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_partner_mode_external_id_key UNIQUE (partner_id, mode, external_id);
