// Turns TypeBox validation errors into one clear sentence per problem, naming the field path.
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { EXTERNAL_ID_RULE, Limits, TEXT_KIND, textLengthProblem } from "@pss/contracts";
import { Kind, type TSchema } from "@sinclair/typebox";
import type { ErrorDetail } from "./errors.ts";

/** "/location/city" -> "location.city"; "/photos/0/url" -> "photos[0].url" */
export function fieldPath(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), "");
}

const FORMAT_MESSAGES: Record<string, string> = {
  email: "must be a valid e-mail address",
  "http-url": "must be an absolute http(s) URL",
  "date-time": "must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T12:00:00Z",
  "country-code": "must be an ISO 3166-1 alpha-2 country code in upper case, e.g. US",
  "external-id": EXTERNAL_ID_RULE,
};

function literals(schema: TSchema | undefined): string[] | null {
  const options: TSchema[] | undefined = schema?.anyOf;
  if (!options) return null;
  const values = options.filter((o) => o.const !== undefined).map((o) => String(o.const));
  return values.length > 0 ? values : null;
}

function describe(error: ValueError): string {
  const schema: TSchema = error.schema;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a known field";
    case ValueErrorType.StringFormat:
      return FORMAT_MESSAGES[schema.format] ?? `must match the ${schema.format} format`;
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? "must not be empty" : `must be at least ${schema.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`;
    case ValueErrorType.StringPattern:
      return schema.description ? `is not valid: ${schema.description}` : "has an invalid format";
    case ValueErrorType.ObjectMinProperties:
      return schema.description ? `must not be empty (${schema.description})` : "must not be empty";
    case ValueErrorType.Kind:
      if (schema[Kind] === TEXT_KIND) {
        const problem = textLengthProblem(schema, error.value);
        if (problem === "type") return "must be a string";
        if (problem === "maxLength") return `must be at most ${schema.maxLength} characters`;
        return schema.minLength === 1 ? "must not be empty" : `must be at least ${schema.minLength} characters`;
      }
      return error.message.replace(/^Expected/, "must be");
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${schema.maxItems} items`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${schema.minimum}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${schema.maximum}`;
    case ValueErrorType.Integer:
      return "must be an integer";
    case ValueErrorType.Number:
      return "must be a number";
    case ValueErrorType.Boolean:
      return "must be true or false";
    case ValueErrorType.String:
      return "must be a string";
    case ValueErrorType.Array:
      return "must be an array";
    case ValueErrorType.Object:
      return "must be an object";
    case ValueErrorType.Union: {
      const values = literals(schema);
      if (values) return `${error.value === null ? "cannot be null; it " : ""}must be one of ${values.join(", ")}`;
      const allowsNull = schema.anyOf?.some((o: TSchema) => o.type === "null");
      const inner = schema.anyOf?.find((o: TSchema) => o.type !== "null");
      const innerValues = literals(inner);
      if (allowsNull && innerValues) return `must be one of ${innerValues.join(", ")}, or null to clear it`;
      if (allowsNull && inner) return `${describeType(inner)}, or null to clear it`;
      return "has an invalid value";
    }
    default:
      return error.message.replace(/^Expected/, "must be");
  }
}

function describeType(schema: TSchema): string {
  if (schema.format && FORMAT_MESSAGES[schema.format]) return FORMAT_MESSAGES[schema.format]!;
  if (schema.type === "number" && schema.minimum === 0)
    return `must be a number from 0 to ${schema.maximum ?? Limits.money}`;
  if (schema.type === "integer") return "must be an integer";
  if (schema.type === "array")
    return `must be an array${schema.maxItems ? ` of at most ${schema.maxItems} items` : ""}`;
  if (schema.type === "object") return "must be an object";
  if (schema.type === "boolean") return "must be true or false";
  if (schema.type === "string") return "must be a non-empty string";
  return "has an invalid value";
}

/**
 * A nullable object or array (T | null) that fails reports only "union failed". When the value is not null,
 * the real problems are inside the T branch: validate against it to name them.
 */
function expandNullableUnions(errors: ValueError[]): ValueError[] {
  return errors.flatMap((error) => {
    const schema: TSchema = error.schema;
    if (error.type !== ValueErrorType.Union || error.value === null || !Array.isArray(schema.anyOf)) return [error];
    const branches = schema.anyOf.filter((o: TSchema) => o.type !== "null");
    if (branches.length !== 1 || schema.anyOf.length !== 2) return [error];
    const inner = [...Value.Errors(branches[0], error.value)].map((e) => ({ ...e, path: error.path + e.path }));
    return inner.length ? expandNullableUnions(inner) : [error];
  });
}

/** One detail per field, most specific first; a union error is dropped when a deeper error explains it. */
export function describeValidationErrors(errors: Iterable<ValueError>, root = ""): ErrorDetail[] {
  const byPath = new Map<string, ErrorDetail>();
  const all = expandNullableUnions([...errors]);
  for (const error of all) {
    const path = fieldPath(root + error.path);
    if (byPath.has(path)) continue;
    const deeper = all.some((e) => e !== error && e.path.startsWith(error.path + "/"));
    if (error.type === ValueErrorType.Union && deeper) continue;
    // A nested object sent as null where null is not allowed gives both "object" and "union" errors: keep one.
    if (
      error.value === null &&
      error.type !== ValueErrorType.Union &&
      all.some((e) => e.path === error.path && e.type === ValueErrorType.Union)
    )
      continue;
    byPath.set(path, {
      path,
      message:
        error.value === null && error.type !== ValueErrorType.Union
          ? `cannot be null (${describe(error)})`
          : describe(error),
    });
  }
  return [...byPath.values()];
}
