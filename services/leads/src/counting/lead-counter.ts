// The counting consumer's batch handler: every lead.submitted of a partition batch recorded in one statement.
// Only live leads: a test key's simulated leads (mode "test") are counted from the leads table by the API and
// never enter counted_leads or its buckets, so no live count can ever include one.
import { eventMode, type AnyEventEnvelope } from "@pss/contracts";
import type { Logger, MessageContext } from "@pss/service-kit";
import type postgres from "postgres";
import { recordLeads, type CountedLead } from "./count-recorder.ts";
import { parseLeadEvent } from "./lead-event.ts";

type Item = { event: AnyEventEnvelope; ctx: MessageContext };

export function createLeadCounter(deps: { sql: postgres.Sql; logger: Logger }) {
  return async function handleBatch(items: Item[]) {
    const leads: CountedLead[] = [];
    const failed: { event: AnyEventEnvelope; reason: string }[] = [];
    for (const { event } of items) {
      if (eventMode(event) !== "live") continue;
      const parsed = parseLeadEvent(event);
      if (parsed.ok === true) leads.push(parsed.lead);
      else if (parsed.ok === false) failed.push({ event, reason: parsed.reason });
    }
    const recorded = await recordLeads(deps.sql, leads);
    if (leads.length > 0)
      deps.logger.debug("leads counted", { received: leads.length, recorded, repeats: leads.length - recorded });
    return failed;
  };
}
