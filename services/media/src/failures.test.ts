import { expect, test } from "bun:test";
import {
  classifyJobError,
  Failures,
  INTERNAL_FAILURE_REASON,
  isDatabaseOutage,
  isStorageOutage,
  isTransientReason,
  type MediaFailure,
  StorageUnavailable,
} from "./failures.ts";

test("isTransientReason agrees with every failure's own transient flag (what `media retry --all-transient` resets)", () => {
  const failures: MediaFailure[] = [];
  for (const [name, make] of Object.entries(Failures)) {
    if (name === "httpStatus")
      for (const status of [400, 403, 404, 408, 410, 429, 500, 502, 503, 504])
        failures.push(Failures.httpStatus(status));
    else if (name === "network") failures.push(Failures.network("ECONNABORTED"), Failures.network("EPIPE"));
    else failures.push((make as () => MediaFailure)());
  }
  expect(failures.length).toBeGreaterThan(20);
  for (const f of failures) expect([f.reason, isTransientReason(f.reason)]).toEqual([f.reason, f.transient]);
  expect(isTransientReason(INTERNAL_FAILURE_REASON)).toBe(true);
  expect(isTransientReason("something nobody wrote")).toBe(false);
});

test("classifyJobError: the image's problems spend attempts; our store and PostgreSQL being down never do", () => {
  for (const f of [
    Failures.notAnImage(),
    Failures.tooLarge(),
    Failures.httpStatus(404),
    Failures.httpStatus(503),
    Failures.timedOut(),
    Failures.connectionRefused(),
  ]) {
    expect(classifyJobError(f)).toEqual({ side: "image", failure: f });
  }
  // Whatever the store answered (refused connection, a 503, access denied): ours.
  for (const cause of [
    Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    new Error("object storage answered 503"),
    new Error("Access Denied"),
  ]) {
    expect(classifyJobError(new StorageUnavailable(cause))).toEqual({ side: "ours", dependency: "storage" });
    expect(isStorageOutage(new StorageUnavailable(cause))).toBe(true);
  }
  for (const code of ["ECONNREFUSED", "CONNECTION_CLOSED", "57P01", "53300"]) {
    expect(classifyJobError(Object.assign(new Error("pg"), { code }))).toEqual({
      side: "ours",
      dependency: "postgres",
    });
    expect(isDatabaseOutage(Object.assign(new Error("pg"), { code }))).toBe(true);
  }
  // A defect is neither: bounded by the attempts like a transient image failure.
  const internal = classifyJobError(Object.assign(new Error("duplicate key"), { code: "23505" }));
  expect(internal.side).toBe("internal");
  expect(internal.side !== "ours" && internal.failure.reason).toBe(INTERNAL_FAILURE_REASON);
  expect(isDatabaseOutage(new TypeError("x is undefined"))).toBe(false);
  expect(isStorageOutage(Failures.notAnImage())).toBe(false);
});
