// The served OpenAPI document does not depend on which requests the API has seen: it was built from the shared
// contract schemas, which the framework's validators used to change on a route's first request (adding
// additionalProperties to answers' schemas). Checked in a fresh process (support/openapi-round.ts), where no
// validator has run before the first document is served.
import { expect, test } from "bun:test";
import { join } from "node:path";

test("the document served before any request equals the one served after a round of requests over every route", async () => {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "support/openapi-round.ts")], {
    cwd: join(import.meta.dir, ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, err: code === 0 ? "" : err }).toEqual({ code: 0, err: "" });
  const { before, after, firstAgain, statuses } = JSON.parse(out) as {
    before: any;
    after: any;
    firstAgain: any;
    statuses: Record<string, number[]>;
  };
  // The round validated bodies, queries and answers: writes succeeded, bad input was refused.
  expect(statuses["PUT /partner/v1/brokers/round-b"]).toContain(201);
  expect(statuses["PUT /partner/v1/listings/round-l"]).toEqual(expect.arrayContaining([201, 200, 400]));
  expect(statuses["GET /partner/v1/health"]).toEqual(expect.arrayContaining([200, 401]));
  expect(Object.values(statuses).flat()).not.toContain(500);
  expect(before.openapi).toBe("3.1.0");
  expect(after).toEqual(before);
  expect(firstAgain).toEqual(before);
  // What the validators used to add is stated from the start.
  expect(
    before.paths["/partner/v1/health"].get.responses["200"].content["application/json"].schema.additionalProperties,
  ).toBe(false);
}, 120_000);
