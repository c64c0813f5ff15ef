-- The first bytes of the receiver's answer to each webhook attempt (issue 42; docs/portal.md "Webhooks"): what the
-- partner's staff read in the portal's delivery log beside the status and the duration ("invalid signature", a
-- stack trace, a maintenance page). Written by the webhooks service with the attempt (owner: services/webhooks, as
-- the rest of the row); at most 512 bytes, read within the attempt's own timeout. NULL for attempts of earlier
-- releases, and when no answer came.
ALTER TABLE webhook_attempts ADD COLUMN response_excerpt text;

-- The overview's inquiries per day (people with lead access): a partner's leads by mode and time, without reading
-- every partner's leads.
CREATE INDEX leads_partner_created ON leads (partner_id, mode, created_at);
