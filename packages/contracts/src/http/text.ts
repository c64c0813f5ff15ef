// Text whose length is counted in characters (Unicode code points), as JSON Schema and the OpenAPI document
// count it. TypeBox's own String counts UTF-16 code units, so 150 emoji would break a 200-character limit
// the document promises; this kind checks what the document says. Registered by registerFormats().
import { Kind, Type, TypeRegistry, type SchemaOptions, type TUnsafe } from "@sinclair/typebox";

export const TEXT_KIND = "CodePointText";

export interface TextOptions extends SchemaOptions {
  minLength?: number;
  maxLength?: number;
}

/** A string of minLength..maxLength characters (code points). */
export const Text = (options: TextOptions = {}): TUnsafe<string> =>
  Type.Unsafe<string>({ ...options, [Kind]: TEXT_KIND, type: "string" });

export function codePointLength(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Why a value breaks a Text schema ("is too long" etc.), or null. */
export function textLengthProblem(schema: TextOptions, value: unknown): "type" | "minLength" | "maxLength" | null {
  if (typeof value !== "string") return "type";
  // Only strings near a limit need counting: code points never exceed code units.
  if (schema.minLength !== undefined && value.length < schema.minLength) return "minLength";
  if (schema.maxLength !== undefined && value.length > schema.maxLength && codePointLength(value) > schema.maxLength)
    return "maxLength";
  if (
    schema.minLength !== undefined &&
    value.length < 2 * schema.minLength &&
    codePointLength(value) < schema.minLength
  )
    return "minLength";
  return null;
}

export function registerTextKind(): void {
  if (!TypeRegistry.Has(TEXT_KIND))
    TypeRegistry.Set<TextOptions>(TEXT_KIND, (schema, value) => textLengthProblem(schema, value) === null);
}
