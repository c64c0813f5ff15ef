// Typed errors; http/error-mapper.ts is the one place that turns them into responses.
import { ErrorMessages } from "@pss/contracts";

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(400, message, details);
  }
}

/** One detail → one clear sentence; several → the first, with a count of the rest. */
export function validationError(details: ErrorDetail[]): BadRequestError {
  const [first] = details;
  const rest = details.length - 1;
  const sentence = `${first!.path ? `${first!.path}: ` : ""}${first!.message}`;
  return new BadRequestError(rest > 0 ? `${sentence} (and ${rest} more problem${rest > 1 ? "s" : ""}, see details)` : sentence, details);
}

export class UnauthorizedError extends ApiError {
  constructor() {
    super(401, ErrorMessages.unauthorized);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string = ErrorMessages.notFound) {
    super(404, message);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(allowed: string[]) {
    super(405, ErrorMessages.methodNotAllowed, undefined, { Allow: allowed.join(", ") });
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limit: number) {
    super(413, `${ErrorMessages.payloadTooLarge}: the limit is ${limit} bytes`);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor() {
    super(415, ErrorMessages.unsupportedMediaType);
  }
}

export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, ErrorMessages.rateLimited, undefined, { "Retry-After": String(retryAfterSeconds) });
  }
}
