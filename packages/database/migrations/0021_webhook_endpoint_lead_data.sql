-- Lead data on the webhook routes (docs/leads.md, docs/webhooks.md "Lead data"): an endpoint that has ever been
-- subscribed to lead.received carries lead data for the rest of its life (its delivery history may hold
-- lead.received bodies, and its URL and secret decide where the next ones go). Only keys with lead-tracking
-- permission see, change, delete or re-send such an endpoint or its deliveries. The flag never goes back to false:
-- dropping lead.received from the events does not make the history any less lead data.
ALTER TABLE webhook_endpoints ADD COLUMN carries_lead_data boolean NOT NULL DEFAULT false;
UPDATE webhook_endpoints e SET carries_lead_data = true
WHERE 'lead.received' = ANY(e.events)
   OR EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.event_type = 'lead.received');
