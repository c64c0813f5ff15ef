/**
 * An API answer or record body read generically by key (the SDK keeps no dependency on the service's contracts).
 * The one named place for `any` in the SDK's source (noExplicitAny, biome.jsonc): prefer a real type.
 */
// biome-ignore lint/suspicious/noExplicitAny: the single named escape hatch described above
export type UntypedJson = { [key: string]: any };
