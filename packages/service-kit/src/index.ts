export * from "./config.ts";
export * from "./logger.ts";
export * from "./shutdown.ts";
export * from "./clients.ts";
export * from "./health.ts";
export * from "./kafka.ts";
export * from "./event-consumer.ts";
export * from "./interruptible-sleep.ts";
