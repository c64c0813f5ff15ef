export * from "./migrate.ts";
export * from "./connection-from-env.ts";
