import { expect, test } from "bun:test";
import { Failures, INTERNAL_FAILURE_REASON, isTransientReason, MediaFailure } from "./failures.ts";

test("isTransientReason agrees with every failure's own transient flag (what `media retry --all-transient` resets)", () => {
  const failures: MediaFailure[] = [];
  for (const [name, make] of Object.entries(Failures)) {
    if (name === "httpStatus") for (const status of [400, 403, 404, 408, 410, 429, 500, 502, 503, 504]) failures.push(Failures.httpStatus(status));
    else if (name === "network") failures.push(Failures.network("ECONNABORTED"), Failures.network("EPIPE"));
    else failures.push((make as () => MediaFailure)());
  }
  expect(failures.length).toBeGreaterThan(20);
  for (const f of failures) expect([f.reason, isTransientReason(f.reason)]).toEqual([f.reason, f.transient]);
  expect(isTransientReason(INTERNAL_FAILURE_REASON)).toBe(true);
  expect(isTransientReason("something nobody wrote")).toBe(false);
});
