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
  return new BadRequestError(
    rest > 0 ? `${sentence} (and ${rest} more problem${rest > 1 ? "s" : ""}, see details)` : sentence,
    details,
  );
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

/** The request is valid but the record's state does not allow it now (a disabled webhook endpoint, a limit reached). */
export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, message);
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

export class UnsupportedContentEncodingError extends ApiError {
  constructor(encoding: string) {
    super(415, `Content-Encoding '${encoding.slice(0, 40)}' is not supported: send the body uncompressed`);
  }
}

export class UriTooLongError extends ApiError {
  constructor(limit: number) {
    super(414, `Request target is too long: the limit is ${limit} bytes`);
  }
}

export class HeadersTooLargeError extends ApiError {
  constructor(limit: number) {
    super(431, `Request headers are too large: the limit is ${limit} bytes in all`);
  }
}

export class NotImplementedError extends ApiError {
  constructor(method: string) {
    super(501, `Method ${method.slice(0, 20)} is not implemented by this API`);
  }
}

export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number, message: string = ErrorMessages.rateLimited) {
    super(429, message, undefined, { "Retry-After": String(retryAfterSeconds) });
  }
}

/** Seconds a client should wait before retrying while a dependency the request needs is down. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 2;

/** A dependency the request needs (PostgreSQL) cannot be reached: retry later, nothing was stored. */
export class ServiceUnavailableError extends ApiError {
  constructor(
    message = "The service is temporarily unavailable; please retry shortly",
    retryAfterSeconds = DEPENDENCY_RETRY_AFTER_SECONDS,
  ) {
    super(503, message, undefined, { "Retry-After": String(retryAfterSeconds) });
  }
}
