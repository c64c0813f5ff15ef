-- A webhook delivery's trace (issue 43; docs/operations.md "Following one request"). Owner: services/webhooks (the
-- fan-out writes the column, the delivery worker reads it), as the rest of webhook_deliveries.
--
-- A delivery is made by the fan-out (the consumer of the fact) and sent later by the delivery worker, in another
-- loop and possibly another instance: the traceparent of the fan-out's span is kept with the delivery so each
-- attempt's span is its child, and the write's one trace reaches the partner's endpoint. Expand only: nullable, no
-- default, no rewrite of the table; a previous release's fan-out leaves it NULL (its deliveries are sent without a
-- trace) and its worker never reads it.
ALTER TABLE webhook_deliveries ADD COLUMN traceparent text;
