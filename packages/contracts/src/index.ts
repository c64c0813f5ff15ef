export * from "./topics.ts";
export * from "./envelope.ts";
export * from "./formats.ts";
export * from "./http/common.ts";
export * from "./http/broker.ts";
export * from "./http/listing.ts";
// [media contracts]
// [buyer contracts]
// [lead contracts]
