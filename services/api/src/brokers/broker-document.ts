// The broker as the partner sees it, in canonical form: what is stored, hashed and compared.
import type { BrokerBody, License, ServiceArea } from "@pss/contracts";
import type { ErrorDetail } from "@pss/http-kit";
import { mergePatch, pruneEmpty, type Json } from "../records/merge-patch.ts";

export interface BrokerDocument {
  name: string;
  email: string;
  phone?: string;
  avatarUrl?: string;
  forwardingEmail?: string;
  profile?: { bio?: string; website?: string; linkedInUrl?: string };
  licenses?: License[];
  serviceAreas?: ServiceArea[];
}

/** Applies a PUT body to the stored document (or to nothing, on create). */
export function applyBrokerBody(current: BrokerDocument | null, body: BrokerBody): BrokerDocument {
  return pruneEmpty(mergePatch((current ?? {}) as Json, body as Json) as Json) as unknown as BrokerDocument;
}

/** Rules the schema cannot express. `root` prefixes paths for an inline broker ("broker."). */
export function brokerBodyProblems(body: BrokerBody, root = ""): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  body.licenses?.forEach((license, i) => {
    if (!license.licenseNumber && !license.state && !license.country) {
      problems.push({ path: `${root}licenses[${i}]`, message: "must give a licenseNumber, a state or a country" });
    }
  });
  body.serviceAreas?.forEach((area, i) => {
    if (!area.city && !area.county && !area.state) {
      problems.push({ path: `${root}serviceAreas[${i}]`, message: "must name a city, a county or a state" });
    }
  });
  return problems;
}
