import { expect, test } from "bun:test";
import { PssError } from "./errors.ts";
import { createPartnerClient } from "./partner-client.ts";

test("a dry-run answered as a real PUT (an API without dry-run) is an error, not a silent success", async () => {
  const seen: string[] = [];
  const olderApi = async (request: Request) => {
    seen.push(request.url);
    return Response.json(
      {
        status: "success",
        message: "Broker created",
        serviceBrokerId: "1",
        serviceProfileUrl: "https://m.example/brokers/1",
      },
      { status: 201 },
    );
  };
  const client = createPartnerClient({ baseUrl: "http://api.example", apiKey: "k", fetch: olderApi, retry: false });
  const err = await client
    .putBroker("b-1", { name: "B", email: "b@example.com" } as never, { dryRun: true })
    .catch((e) => e);
  expect(err).toBeInstanceOf(PssError);
  expect(err.message).toContain("does not support dry-run");
  expect(seen).toEqual(["http://api.example/partner/v1/brokers/b-1?dryRun=true"]);
});
