// The one place that turns any failure into the spec's error shape. Nothing internal ever leaks.
import { ErrorMessages } from "@pss/contracts";
import type { ValueError } from "@sinclair/typebox/errors";
import { isDependencyUnavailable, type Logger } from "@pss/service-kit";
import { ApiError, BadRequestError, ServiceUnavailableError, validationError } from "./errors.ts";
import { describeValidationErrors } from "./validation-messages.ts";

export interface MappedError {
  status: number;
  body: { status: "error"; error: string; details?: { path: string; message: string }[]; requestId?: string };
  headers?: Record<string, string>;
}

export function mapError(args: {
  code: string | number;
  error: unknown;
  requestId: string;
  logger: Logger;
}): MappedError {
  const { code, error, requestId, logger } = args;
  // Elysia wraps what a parse hook throws in its own ParseError; our typed error is the cause.
  const cause = (error as { cause?: unknown } | null)?.cause;
  let mapped: ApiError | null = error instanceof ApiError ? error : cause instanceof ApiError ? cause : null;

  if (!mapped && code === "VALIDATION") {
    const v = error as { type?: string; all?: Iterable<ValueError> };
    const details = describeValidationErrors(v.all ?? []);
    if (v.type === "query")
      mapped = new BadRequestError(
        `Invalid query parameters: ${details.map((d) => `${d.path || "query"} ${d.message}`).join("; ")}`,
        details,
      );
    else if (details.length) mapped = validationError(details);
    else mapped = new BadRequestError("Request is not valid");
  }
  if (!mapped && code === "PARSE") mapped = new BadRequestError(ErrorMessages.malformedJson);
  // PostgreSQL unreachable (down, restarting, out of connections), also during authentication: 503, retry later.
  if (!mapped && isDependencyUnavailable(error)) {
    logger.warn("dependency unavailable", {
      requestId,
      err: { code: (error as { code?: unknown }).code, message: (error as Error).message },
    });
    mapped = new ServiceUnavailableError();
  }

  if (mapped) {
    return {
      status: mapped.status,
      body: { status: "error", error: mapped.message, ...(mapped.details ? { details: mapped.details } : {}) },
      headers: mapped.headers,
    };
  }
  logger.error("unhandled error", { requestId, code, err: error instanceof Error ? error : String(error) });
  return { status: 500, body: { status: "error", error: ErrorMessages.internal, requestId } };
}
