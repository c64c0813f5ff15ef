// The listing page's inquiry form (application/x-www-form-urlencoded) into the same intake as the JSON API:
// the same LeadBody schema and text rules, then submitLead (abuse limits, honeypot, one durable write). What
// differs is only the answer: problems per field for the page to show, instead of a JSON 400.
import { findTextProblem, LeadBody, registerFormats } from "@pss/contracts";
import { Value } from "@sinclair/typebox/value";
import type { Server } from "bun";
import type { EventTrace, Logger } from "@pss/service-kit";
import {
  type ApiError,
  BadRequestError,
  NotFoundError,
  RateLimitedError,
  UnsupportedMediaTypeError,
} from "../http/errors.ts";
import { readCappedBody } from "../http/json-body.ts";
import { describeValidationErrors } from "../http/validation-messages.ts";
import { type IdempotencyLayer, keyScope, requestFingerprint } from "../http/idempotency.ts";
import { addressBucket, clientAddress } from "./client-address.ts";
import { blankLeadFields, submitLead, type LeadIntakeDeps } from "./lead-service.ts";

export const LEAD_FORM_FIELDS = ["name", "email", "phone", "message"] as const;
export type LeadFormField = (typeof LEAD_FORM_FIELDS)[number];
export type LeadFormValues = Partial<Record<LeadFormField, string>>;

export type LeadFormOutcome =
  | { kind: "accepted"; leadId: string }
  /** Nothing stored: the problems per field (the buyer's wording) and the values to show again. */
  | { kind: "invalid"; values: LeadFormValues; errors: Partial<Record<LeadFormField, string>> }
  | { kind: "rate-limited"; values: LeadFormValues; retryAfterSeconds: number }
  /** The listing is not (or no longer) buyer-visible. */
  | { kind: "not-found" };

const FORM_CONTENT_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/** What people see beside a field, from the API's sentence for it (e.g. "must be a valid e-mail address"). */
function buyerWording(field: LeadFormField, apiMessage: string): string {
  if (/empty|blank|required/.test(apiMessage))
    return {
      name: "Enter your name.",
      email: "Enter your e-mail address.",
      phone: "Enter a phone number.",
      message: "Write a message for the broker.",
    }[field];
  const tooLong = /at most (\d+) characters/.exec(apiMessage);
  if (tooLong) return `Use at most ${Number(tooLong[1]).toLocaleString("en-US")} characters.`;
  if (field === "email") return "Enter an e-mail address like name@example.com.";
  if (field === "phone") return "Enter a phone number in digits, e.g. +1 512 555 0100, or leave it empty.";
  return `${apiMessage.charAt(0).toUpperCase()}${apiMessage.slice(1)}.`;
}

/** The form's fields as the JSON body the API takes: empty optional fields left out, line breaks as \n. */
export function leadBodyFromForm(form: URLSearchParams): { body: Record<string, string>; values: LeadFormValues } {
  const get = (name: string) => form.get(name) ?? "";
  const values: LeadFormValues = {
    name: get("name"),
    email: get("email").trim(),
    phone: get("phone").trim(),
    message: get("message").replace(/\r\n?/g, "\n"),
  };
  const body: Record<string, string> = { name: values.name!, email: values.email!, message: values.message! };
  if (values.phone) body.phone = values.phone;
  const website = get("website");
  if (website) body.website = website;
  return { body, values };
}

/** Problems per field, by the same schema and text rules as the JSON route; empty when the body is valid. */
export function leadFormProblems(body: Record<string, string>): Partial<Record<LeadFormField, string>> {
  registerFormats();
  const errors: Partial<Record<LeadFormField, string>> = {};
  const add = (path: string, message: string) => {
    const field = path as LeadFormField;
    if ((LEAD_FORM_FIELDS as readonly string[]).includes(field) && !errors[field])
      errors[field] = buyerWording(field, message);
  };
  const text = findTextProblem(body);
  if (text) add(text.path, text.message);
  for (const d of describeValidationErrors(Value.Errors(LeadBody, body))) add(d.path, d.message);
  for (const d of blankLeadFields(body as { name: string; message: string })) add(d.path, d.message);
  return errors;
}

/** The form's hidden field holding a key made for each rendering of the form (inquiry-form.ts). */
export const FORM_KEY_FIELD = "idempotencyKey";

/**
 * The inquiry once per rendering of the form and content: the same form posted again with the same fields (a
 * double click, the back button and "send" again, a balancer's retry) is answered with the first inquiry's ID and
 * stores nothing more. The key is the form's hidden one together with a hash of the fields, so the same form sent
 * with other content is a new inquiry. A form without a valid key (an old page) is sent as it is.
 */
async function submitOnce(
  idempotency: IdempotencyLayer | undefined,
  formKey: string | null,
  address: string | null,
  args: { listingId: string; request: Request },
  body: Record<string, string>,
  submit: () => Promise<{ leadId: string }>,
): Promise<{ leadId: string }> {
  if (!idempotency || !formKey || !/^[\x21-\x7e]{1,100}$/.test(formKey)) return submit();
  const fingerprint = requestFingerprint("POST", new URL(args.request.url).pathname, body);
  const answer = await idempotency.run(
    {
      scope: keyScope.address(addressBucket(address)),
      key: `form:${formKey}:${fingerprint.toString("hex", 0, 16)}`,
      fingerprint,
    },
    async () => ({ status: 202, body: await submit() }),
  );
  return answer.body as { leadId: string };
}

export async function submitLeadForm(
  deps: LeadIntakeDeps,
  args: {
    listingId: string;
    request: Request;
    server: Pick<Server<unknown>, "requestIP"> | null;
    maxBodyBytes: number;
    trace?: EventTrace;
    log?: Logger;
  },
): Promise<LeadFormOutcome> {
  if (!FORM_CONTENT_TYPE.test(args.request.headers.get("content-type") ?? "")) throw new UnsupportedMediaTypeError();
  const bytes = await readCappedBody(args.request, args.maxBodyBytes);
  const form = new URLSearchParams(new TextDecoder().decode(bytes));
  const { body, values } = leadBodyFromForm(form);
  const formKey = form.get(FORM_KEY_FIELD);
  const errors = leadFormProblems(body);
  if (Object.keys(errors).length) return { kind: "invalid", values, errors };
  const address = clientAddress(args.request, args.server, deps.trustedProxies);
  const submit = () =>
    submitLead(deps, {
      listingId: args.listingId,
      body: body as unknown as LeadBody,
      clientAddress: address,
      trace: args.trace,
      log: args.log,
    });
  try {
    const { leadId } = await submitOnce(deps.idempotency, formKey, address, args, body, submit);
    return { kind: "accepted", leadId };
  } catch (err) {
    if (err instanceof RateLimitedError)
      return {
        kind: "rate-limited",
        values,
        retryAfterSeconds: Number((err as ApiError).headers?.["Retry-After"] ?? 60),
      };
    if (err instanceof NotFoundError) return { kind: "not-found" };
    // submitLead's own checks ("name: must not be blank") belong beside their field too.
    if (err instanceof BadRequestError) {
      const [, path, message] = /^(\w+): (.*)$/.exec(err.message) ?? [];
      if (path && message && (LEAD_FORM_FIELDS as readonly string[]).includes(path))
        return { kind: "invalid", values, errors: { [path]: buyerWording(path as LeadFormField, message) } };
    }
    throw err;
  }
}
