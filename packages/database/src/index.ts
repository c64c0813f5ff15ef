export * from "./migrate.ts";
