// Reads and parses a JSON request body under every rule the API promises: a byte limit measured while
// reading (chunked bodies too), strict UTF-8, bounded nesting, and text without control characters or lone
// surrogates. Each failure is a typed error the one error mapper turns into a clear 4xx.
import { ErrorMessages, MAX_JSON_DEPTH, findTextProblem, jsonDepthExceeds } from "@pss/contracts";
import {
  BadRequestError,
  PayloadTooLargeError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
} from "./errors.ts";

const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The body's bytes, refusing as soon as more than maxBytes have arrived. */
export async function readCappedBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  // A declared length within the limit bounds the body already (the server never reads past it): read it in
  // one native call instead of chunk by chunk through a stream reader.
  const declared = request.headers.get("content-length");
  if (declared !== null && /^[0-9]{1,10}$/.test(declared) && Number(declared) <= maxBytes) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw new PayloadTooLargeError(maxBytes);
    return bytes;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Validates a body's headers, then reads, decodes and parses it. `textRules: false` leaves the text rules to the
 * route (a batch checks each item's body on its own, so one bad item does not refuse the others).
 */
export async function parseJsonRequest(
  request: Request,
  maxBytes: number,
  opts: { textRules?: boolean } = {},
): Promise<unknown> {
  const encoding = request.headers.get("content-encoding");
  if (encoding && encoding.trim().toLowerCase() !== "identity") throw new UnsupportedContentEncodingError(encoding);
  if (!JSON_CONTENT_TYPE.test(request.headers.get("content-type") ?? "")) throw new UnsupportedMediaTypeError();
  return parseJsonBytes(await readCappedBody(request, maxBytes), opts);
}

/** The text rules' 400 for a parsed value, or null: what parseJsonBytes answers for a whole body. */
export function textRuleError(value: unknown): BadRequestError | null {
  const problem = findTextProblem(value);
  return problem
    ? new BadRequestError(`${problem.path ? `${problem.path}: ` : ""}${problem.message}`, [problem])
    : null;
}

export function parseJsonBytes(bytes: Uint8Array, opts: { textRules?: boolean } = {}): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new BadRequestError("Request body is not valid UTF-8");
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
    throw new BadRequestError(
      `Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError(ErrorMessages.malformedJson);
  }
  const refused = opts.textRules === false ? null : textRuleError(value);
  if (refused) throw refused;
  return value;
}
