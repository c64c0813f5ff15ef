/**
 * JSON read generically: a JSON Schema or OpenAPI node walked by key, a stored document whose shape only the
 * reading code knows. The one named place for `any` in the services' source (noExplicitAny, biome.jsonc): when
 * the shape is known, say it with a real type instead.
 */
// biome-ignore lint/suspicious/noExplicitAny: the single named escape hatch described above
export type UntypedJson = { [key: string]: any };
