// The HTTP application as a factory: tests drive it with app.handle() or a real listener.
import { Elysia } from "elysia";
import { createHealthRoutes, type ReadinessCheck } from "@pss/service-kit";

export interface AppDeps {
  readiness: Record<string, ReadinessCheck>;
  isStopping?: () => boolean;
}

export function createApp(deps: AppDeps) {
  return new Elysia().use(createHealthRoutes({ service: "api", checks: deps.readiness, isStopping: deps.isStopping }));
}
