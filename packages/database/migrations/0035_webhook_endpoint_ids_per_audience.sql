-- Endpoint IDs per audience (issue 37; docs/webhooks.md "Lead data"): a key without lead tracking must not learn
-- that an endpoint it cannot see (one carrying lead data) holds an ID, so its PUT of such an ID creates an endpoint
-- of its own (201) instead of answering 404. The unique key (partner_id, mode, external_id) stays, as the previous
-- release's writes name it (ON CONFLICT): such an endpoint is stored under a private external_id (the ID, U+001F
-- and a UUID: no partner's ID can take that form, control characters are refused) and shown_external_id holds the
-- ID its partner gave and sees. Everywhere an endpoint is named or shown, it is COALESCE(shown_external_id,
-- external_id); a key with lead tracking that names an ID both audiences hold gets the endpoint carrying lead data.
ALTER TABLE webhook_endpoints ADD COLUMN shown_external_id text;
CREATE INDEX webhook_endpoints_shown_external_id ON webhook_endpoints (partner_id, mode, shown_external_id)
  WHERE shown_external_id IS NOT NULL;
