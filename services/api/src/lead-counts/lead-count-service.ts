// Lead counts for an office or an organization of the calling partner (docs/leads.md: bounds and design).
import { ErrorMessages, type OfficeLeadCount, type OrganizationLeadCount } from "@pss/contracts";
import type postgres from "postgres";
import { NotFoundError } from "@pss/http-kit";
import { planSegments } from "./count-plan.ts";
import type { LeadCountCache } from "./lead-count-cache.ts";
import {
  countLeadsByOffice,
  countTestLeadsByOffice,
  findOffice,
  findOrganization,
  type CountScope,
} from "./lead-count-repository.ts";
import type { DateRange } from "./date-range.ts";
import type { RecordScope } from "../records/record-scope.ts";

export interface LeadCountService {
  office(scope: RecordScope, officeId: number, range: DateRange): Promise<OfficeLeadCount>;
  organization(scope: RecordScope, organizationId: number, range: DateRange): Promise<OrganizationLeadCount>;
}

const rangeKey = (r: DateRange) => `${r.start?.getTime() ?? "-"}:${r.end?.getTime() ?? "now"}`;

export function createLeadCountService(deps: { sql: postgres.Sql; cache?: LeadCountCache }): LeadCountService {
  const { sql, cache } = deps;
  // Keyed by partner too: the answer depends on who may see the office.
  async function cached<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const hit = cache ? await cache.get<T>(key) : null;
    if (hit) return hit;
    const value = await compute();
    // Not awaited: the answer is ready; the cache write (which never throws) need not delay it.
    void cache?.set(key, value);
    return value;
  }

  // Live: the pre-aggregated counts (counted_leads never holds a test lead). Test: the few simulated leads, read directly.
  const count = (scope: RecordScope, whose: CountScope, range: DateRange) => {
    const end = range.end ?? new Date();
    return scope.mode === "test"
      ? countTestLeadsByOffice(sql, whose, range.start, end)
      : countLeadsByOffice(sql, whose, planSegments(range.start, end));
  };

  return {
    office: ({ partnerId, mode }, officeId, range) =>
      cached(`${partnerId}:${mode}:office:${officeId}:${rangeKey(range)}`, async () => {
        // Independent reads: run them together; a 404 discards the count.
        const [office, counts] = await Promise.all([
          findOffice(sql, partnerId, officeId),
          count({ partnerId, mode }, { officeId }, range),
        ]);
        if (!office) throw new NotFoundError(ErrorMessages.officeNotFound);
        return {
          status: "success" as const,
          officeId: office.id,
          officeName: office.name,
          totalLeads: counts.get(officeId) ?? 0,
        };
      }),

    organization: ({ partnerId, mode }, organizationId, range) =>
      cached(`${partnerId}:${mode}:organization:${organizationId}:${rangeKey(range)}`, async () => {
        const [organization, counts] = await Promise.all([
          findOrganization(sql, partnerId, organizationId),
          count({ partnerId, mode }, { organizationId }, range),
        ]);
        if (!organization) throw new NotFoundError(ErrorMessages.organizationNotFound);
        const officeBreakdown = organization.offices.map((o) => ({
          officeId: o.id,
          officeName: o.name,
          totalLeads: counts.get(o.id) ?? 0,
        }));
        return {
          status: "success" as const,
          organizationId: organization.id,
          organizationName: organization.name,
          totalLeads: officeBreakdown.reduce((sum, o) => sum + o.totalLeads, 0),
          officeBreakdown,
        };
      }),
  };
}
