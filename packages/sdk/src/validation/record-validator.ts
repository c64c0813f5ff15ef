// Local validation of PUT bodies against the OpenAPI document the SDK ships (openapi.json): the document is
// built from the very schemas the API validates with, so a body that passes here passes there, and a body
// refused here would be refused there with the same field path. Messages follow the API's wording.
import * as ajv2020 from "ajv/dist/2020.js";
import type { ErrorObject, Options, ValidateFunction } from "ajv/dist/2020.js";
import type { UntypedJson } from "../untyped-json.ts";
import document from "../../openapi.json" with { type: "json" };
import { isDateTime } from "./date-time.ts";

// A CommonJS module: Bun and Node's ESM loader both give module.exports (the class) as the default export,
// while the TypeScript types differ by module resolution; the class is also module.exports.default.
type AjvInstance = { compile(schema: object): ValidateFunction; addFormat(name: string, format: unknown): unknown };
const ajvModule = ajv2020 as unknown as { default: { default?: unknown } };
const Ajv2020 = (ajvModule.default.default ?? ajvModule.default) as new (options: Options) => AjvInstance;

export type RecordKind = "broker" | "listing";

export interface FieldProblem {
  /** The field path as the API names it: "location.city", "photos[2].url"; "" for the whole body. */
  path: string;
  message: string;
}

const OPERATIONS = {
  broker: { path: "/partner/v1/brokers/{externalBrokerId}", idParameter: "externalBrokerId" },
  listing: { path: "/partner/v1/listings/{externalListingId}", idParameter: "externalListingId" },
} as const;

type Schema = Record<string, unknown>;
type PutOperation = {
  parameters: { name: string; schema: Schema }[];
  requestBody: { content: { "application/json": { schema: Schema } } };
  responses: Record<string, { description?: string }>;
};
const doc = document as unknown as {
  paths: Record<string, { put: PutOperation }>;
  components: Schema;
  info: { description: string };
};

/** Limits the document states in words (info.description, the 413 answer). */
function documentedLimits() {
  const put = doc.paths[OPERATIONS.listing.path]!.put;
  const bytes = /(\d+) bytes/.exec(put.responses["413"]?.description ?? "")?.[1];
  const depth = /at most (\d+) levels deep/.exec(doc.info.description)?.[1];
  return { maxBodyBytes: bytes ? Number(bytes) : 1_048_576, maxDepth: depth ? Number(depth) : 16 };
}
export const LIMITS = documentedLimits();

/** "/location/city" -> "location.city"; "/photos/0/url" -> "photos[0].url" (the API's spelling). */
export function fieldPath(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), "");
}

function describe(error: ErrorObject): string {
  const schema = (error.parentSchema ?? {}) as Schema;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a known field";
    case "type":
      return p.type === "integer"
        ? "must be an integer"
        : p.type === "boolean"
          ? "must be true or false"
          : `must be ${p.type === "array" || p.type === "object" ? "an" : "a"} ${p.type}`;
    case "minLength":
      return schema.minLength === 1 ? "must not be empty" : `must be at least ${schema.minLength} characters`;
    case "maxLength":
      return `must be at most ${schema.maxLength} characters`;
    case "minimum":
      return `must be at least ${p.limit}`;
    case "maximum":
      return `must be at most ${p.limit}`;
    case "maxItems":
      return `must have at most ${p.limit} items`;
    case "minProperties":
      return schema.description ? `must not be empty (${schema.description})` : "must not be empty";
    case "enum": {
      const values = (p.allowedValues as unknown[]).map(String);
      // Country codes: 249 values say less than the schema's description ("ISO 3166-1 alpha-2 country code, …").
      if (values.length > 20)
        return typeof schema.description === "string" && schema.description.startsWith("ISO")
          ? `must be an ${schema.description}`
          : `must be one of the ${values.length} allowed values`;
      return `must be one of ${values.join(", ")}`;
    }
    case "const":
      return `must be ${String(p.allowedValue)}`;
    case "format":
      return p.format === "date-time"
        ? "must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T12:00:00Z"
        : `must match the ${p.format} format`;
    case "pattern":
      return describePattern(
        String(schema.pattern),
        typeof schema.description === "string" ? schema.description : null,
        error.data,
      );
    default:
      return error.message ?? "has an invalid value";
  }
}

/** The text rule every plain string of a body carries (`^[^\u0000-\u001F\u007F]*$` and its multi-line form). */
const TEXT_RULE = /^\^\[\^\\u0000-[^\]]*\]\*\$$/;

function describePattern(pattern: string, description: string | null, value: unknown): string {
  if (TEXT_RULE.test(pattern) && typeof value === "string") {
    const allowed = new RegExp(pattern, "u");
    const found = [...value].find((c) => !allowed.test(c));
    return `must not contain control characters${found ? ` (found U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")})` : ""}`;
  }
  // The API's own wording for its formats (their patterns carry these descriptions in the document).
  if (description?.startsWith("E-mail address")) return "must be a valid e-mail address";
  if (description?.startsWith("Absolute http(s) URL")) return "must be an absolute http(s) URL";
  if (description?.startsWith("External ID: ")) return description.slice("External ID: ".length);
  return description ? `is not valid: ${description}` : "has an invalid format";
}

/**
 * One problem per field, most specific first. Unions are `anyOf`: enums (consts) and other unions are
 * described once, by the union; a nullable field (`anyOf [T, null]`) is described by what is wrong inside T.
 */
export function describeErrors(errors: ErrorObject[]): FieldProblem[] {
  const isNullBranch = (e: ErrorObject) => e.keyword === "type" && (e.params as { type?: unknown }).type === "null";
  const branchOf = (union: ErrorObject, e: ErrorObject) =>
    e !== union && e.schemaPath.startsWith(`${union.schemaPath}/`);
  const dropped = new Set<ErrorObject>();
  for (const union of errors.filter((e) => e.keyword === "anyOf")) {
    const branches = errors.filter((e) => branchOf(union, e));
    const options = ((union.parentSchema as Schema | undefined)?.anyOf ?? []) as Schema[];
    const nullable = options.length === 2 && options.some((o) => o.type === "null") && constsOf(union) === null;
    if (nullable && union.data !== null && branches.some((e) => !isNullBranch(e))) {
      // What is wrong inside T explains it: the union and its "must be null" say nothing more.
      dropped.add(union);
      for (const e of branches) if (isNullBranch(e)) dropped.add(e);
    } else {
      for (const e of branches) dropped.add(e);
    }
  }
  const byPath = new Map<string, FieldProblem>();
  for (const error of errors) {
    if (dropped.has(error)) continue;
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    const pointer =
      error.keyword === "required"
        ? `${error.instancePath}/${params.missingProperty}`
        : error.keyword === "additionalProperties"
          ? `${error.instancePath}/${params.additionalProperty}`
          : error.instancePath;
    const path = fieldPath(pointer);
    if (byPath.has(path)) continue;
    byPath.set(path, {
      path,
      message:
        error.keyword === "anyOf" ? describeUnion(error) : isNullBranch(error) ? "cannot be null" : describe(error),
    });
  }
  return [...byPath.values()];
}

/** The allowed values of an enum written as anyOf of consts (null excluded), or null for another union. */
function constsOf(error: ErrorObject): string[] | null {
  const options = (((error.parentSchema as Schema | undefined)?.anyOf ?? []) as Schema[]).filter(
    (o) => o.type !== "null",
  );
  if (options.length === 0 || !options.every((o) => o.const !== undefined)) return null;
  return options.map((o) => String(o.const));
}

function describeUnion(error: ErrorObject): string {
  const options = ((error.parentSchema as Schema | undefined)?.anyOf ?? []) as Schema[];
  const nullable = options.some((o) => o.type === "null");
  const values = constsOf(error);
  if (values)
    return `${error.data === null ? "cannot be null; it " : ""}must be one of ${values.join(", ")}${nullable ? ", or null to clear it" : ""}`;
  const inner = options.find((o) => o.type !== "null");
  if (inner && nullable && options.length === 2)
    return `must be ${inner.type === "array" || inner.type === "object" ? "an" : "a"} ${String(inner.type)}, or null to clear it`;
  const description = (error.parentSchema as Schema | undefined)?.description;
  return typeof description === "string" ? `is not valid: ${description}` : "has an invalid value";
}

/**
 * One pass over the body: strings (values and field names) with a lone UTF-16 surrogate, which the API refuses
 * and no pattern can express, and the nesting depth. Returns the depth.
 */
function scan(value: unknown, path: string, out: FieldProblem[]): number {
  if (typeof value === "string") {
    if (!value.isWellFormed()) out.push({ path, message: "contains an unpaired UTF-16 surrogate" });
    return 0;
  }
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepest = Math.max(deepest, scan(value[i], `${path}[${i}]`, out));
  } else {
    for (const k in value) {
      const child = path ? `${path}.${k}` : k;
      if (!k.isWellFormed()) out.push({ path: child, message: "field name contains an unpaired UTF-16 surrogate" });
      deepest = Math.max(deepest, scan((value as Record<string, unknown>)[k], child, out));
    }
  }
  return deepest + 1;
}

/** UTF-8 size of a string: Buffer's native count where there is one (Node.js, Bun), else counted here. */
function utf8Length(text: string): number {
  if (typeof Buffer !== "undefined") return Buffer.byteLength(text, "utf8");
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) bytes += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/** Rules the document states in words (each operation's description), checked the way the API checks them. */
function statedRules(kind: RecordKind, body: UntypedJson): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const list = (value: unknown) => (Array.isArray(value) ? value : []);
  const isObject = (value: unknown): value is Record<string, unknown> =>
    !!value && typeof value === "object" && !Array.isArray(value);
  const brokerRules = (broker: UntypedJson, root: string) => {
    // An empty license ({}) breaks the schema's minProperties, which says so itself.
    list(broker.licenses).forEach((l, i) => {
      if (isObject(l) && Object.keys(l).length > 0 && !l.licenseNumber && !l.state && !l.country)
        problems.push({ path: `${root}licenses[${i}]`, message: "must give a licenseNumber, a state or a country" });
    });
    list(broker.serviceAreas).forEach((a, i) => {
      if (isObject(a) && !a.city && !a.county && !a.state)
        problems.push({ path: `${root}serviceAreas[${i}]`, message: "must name a city, a county or a state" });
    });
  };
  if (kind === "broker") brokerRules(body, "");
  else {
    if (isObject(body.broker)) brokerRules(body.broker, "broker.");
    if (
      body.brokerExternalId !== undefined &&
      isObject(body.broker) &&
      body.broker.externalBrokerId !== body.brokerExternalId
    ) {
      problems.push({
        path: "brokerExternalId",
        message: "differs from broker.externalBrokerId; send one of them, or the same ID in both",
      });
    }
    const seen = new Map<string, number>();
    list(body.photos).forEach((photo, i) => {
      if (!isObject(photo) || typeof photo.url !== "string") return;
      const first = seen.get(photo.url);
      if (first !== undefined)
        problems.push({
          path: `photos[${i}].url`,
          message: `repeats photos[${first}].url; each photo URL may appear once`,
        });
      else seen.set(photo.url, i);
    });
  }
  return problems;
}

export interface RecordValidator {
  /**
   * Every problem of a PUT body; empty when the API's schema accepts it. `json`: the body's JSON text if the
   * caller already has it (its size is checked against the API's body limit).
   */
  validateBody(kind: RecordKind, body: unknown, json?: string): FieldProblem[];
  /** The problem with an external ID, or null when it is valid. */
  validateId(kind: RecordKind, id: string): FieldProblem | null;
}

/**
 * Compiles the document's schemas once. A body is checked by a validator that stops at the first error (the
 * common case, a valid body, costs microseconds); only a refused body is checked again by one that collects
 * every error with its schema, compiled the first time it is needed.
 */
export function createRecordValidator(): RecordValidator {
  const ajvOptions: Options = { strict: false, validateSchema: false, validateFormats: true };
  const addFormats = (ajv: AjvInstance) => {
    ajv.addFormat("date-time", { type: "string", validate: isDateTime });
    ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    return ajv;
  };
  const fast = addFormats(new Ajv2020(ajvOptions));
  let detailed: AjvInstance | null = null;
  const bodySchema = (kind: RecordKind) => ({
    ...doc.paths[OPERATIONS[kind].path]!.put.requestBody.content["application/json"].schema,
    components: doc.components,
  });
  const idSchema = (kind: RecordKind) =>
    doc.paths[OPERATIONS[kind].path]!.put.parameters.find((p) => p.name === OPERATIONS[kind].idParameter)!.schema;
  const bodies = {} as Record<RecordKind, ValidateFunction>;
  const ids = {} as Record<RecordKind, ValidateFunction>;
  const explainers = {} as Partial<Record<RecordKind, ValidateFunction>>;
  for (const kind of ["broker", "listing"] as const) {
    // The body schema refers to #/components/...: compile it with the components beside it.
    bodies[kind] = fast.compile(bodySchema(kind));
    ids[kind] = fast.compile(idSchema(kind));
  }
  const explain = (kind: RecordKind, body: unknown): FieldProblem[] => {
    detailed ??= addFormats(new Ajv2020({ ...ajvOptions, allErrors: true, verbose: true }));
    const validate = (explainers[kind] ??= detailed.compile(bodySchema(kind)));
    return validate(body) ? [] : describeErrors(validate.errors ?? []);
  };

  return {
    validateBody(kind, body, json) {
      if (!body || typeof body !== "object" || Array.isArray(body))
        return [{ path: "", message: "the body must be a JSON object" }];
      const problems: FieldProblem[] = [];
      if (scan(body, "", problems) > LIMITS.maxDepth)
        problems.push({
          path: "",
          message: `is nested too deeply: at most ${LIMITS.maxDepth} levels of objects and arrays`,
        });
      const bytes = utf8Length(json ?? JSON.stringify(body));
      if (bytes > LIMITS.maxBodyBytes)
        problems.push({ path: "", message: `is too large: ${bytes} bytes, the limit is ${LIMITS.maxBodyBytes}` });
      const schemaProblems = bodies[kind](body) ? [] : explain(kind, body);
      // A rule stated in words names its field with the API's own sentence; it replaces the schema's wording.
      const stated = statedRules(kind, body as UntypedJson);
      const statedPaths = new Set(stated.map((p) => p.path));
      problems.push(
        ...schemaProblems.filter(
          (p) => !statedPaths.has(p.path) && ![...statedPaths].some((s) => p.path.startsWith(`${s}.`)),
        ),
        ...stated,
      );
      return problems;
    },
    validateId(kind, id) {
      const name = OPERATIONS[kind].idParameter;
      if (typeof id !== "string") return { path: name, message: "must be a string" };
      if (!id.isWellFormed()) return { path: name, message: "contains an unpaired UTF-16 surrogate" };
      if (ids[kind](id)) return null;
      const schema = idSchema(kind);
      return {
        path: name,
        message:
          typeof schema.description === "string"
            ? describePattern(String(schema.pattern), schema.description, id)
            : "is not valid",
      };
    },
  };
}

/** "location.city: must be a string; photos[0].url: …" — the first problems, for one-line reports. */
export function problemsSentence(problems: FieldProblem[], max = 3): string {
  const shown = problems.slice(0, max).map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  return shown.join("; ") + (problems.length > max ? `; and ${problems.length - max} more` : "");
}

/**
 * The JSON type of a body field ("string", "number", "integer", "boolean", "array", "object"), read from the
 * document; null for a field the schema does not have. Nullable fields (anyOf [T, null]) give T's type.
 */
export function bodyFieldType(kind: string, path: string[]): string | null {
  const operation = OPERATIONS[kind as RecordKind];
  if (!operation) return null;
  let schema: Schema | undefined = doc.paths[operation.path]!.put.requestBody.content["application/json"].schema;
  for (const key of path) {
    schema = concrete(schema);
    const properties = schema?.properties as Record<string, Schema> | undefined;
    schema = properties?.[key];
    if (!schema) return null;
  }
  const leaf = concrete(schema);
  return typeof leaf?.type === "string" ? leaf.type : null;
}

/** Resolves a components $ref and picks the non-null branch of a nullable union. */
function concrete(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    return concrete((doc.components as { schemas: Record<string, Schema> }).schemas?.[name]);
  }
  const options = schema.anyOf as Schema[] | undefined;
  if (options) {
    const branches = options.filter((o) => o.type !== "null");
    const first = concrete(branches[0]);
    // An enum written as anyOf of consts: every branch has the same type.
    return branches.length === 1 || branches.every((b) => b.type === first?.type) ? first : undefined;
  }
  return schema;
}
