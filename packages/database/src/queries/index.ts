// Read queries more than one service runs, beside the migrations that define their tables (docs/architecture.md).
// SQL fragments for postgres.js: no client is created here; callers pass theirs.
export * from "./iso-timestamp.ts";
export * from "./listed-at.ts";
export * from "./listing-with-broker.ts";
export * from "./feed-facts.ts";
