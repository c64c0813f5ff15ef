import { describe, expect, test } from "bun:test";
import type { LookupAddress } from "node:dns";
import { DestinationRefused, pinnedLookup, vetDestination, type Resolver } from "./outbound-destination.ts";

const answering =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
const reasonOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "connected",
    (err) => (err instanceof DestinationRefused ? err.reason : String(err)),
  );

describe("vetDestination", () => {
  test("a public name resolves to the address the request connects to", async () => {
    expect(
      await vetDestination(new URL("https://hooks.example.com/in"), {
        allowedHosts: [],
        resolve: answering("93.184.215.14"),
      }),
    ).toEqual({ address: "93.184.215.14", family: 4 });
  });

  test("a name with any private answer is refused, so one public record cannot smuggle a private one", async () => {
    expect(
      await reasonOf(
        vetDestination(new URL("https://hooks.example.com/in"), {
          allowedHosts: [],
          resolve: answering("93.184.215.14", "10.0.0.5"),
        }),
      ),
    ).toBe("address not allowed");
  });

  test("literal private, loopback and metadata addresses are refused without a lookup", async () => {
    const resolve: Resolver = async () => {
      throw new Error("no lookup expected");
    };
    for (const url of [
      "http://127.0.0.1:9000/",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/",
      "http://192.168.1.10/",
    ]) {
      expect(await reasonOf(vetDestination(new URL(url), { allowedHosts: [], resolve }))).toBe("address not allowed");
    }
  });

  test("an allow-listed host:port is exempt, another port of the same host is not", async () => {
    expect(
      await vetDestination(new URL("http://127.0.0.1:4000/hook"), { allowedHosts: ["127.0.0.1:4000"] }),
    ).toMatchObject({ address: "127.0.0.1" });
    expect(
      await reasonOf(vetDestination(new URL("http://127.0.0.1:4001/hook"), { allowedHosts: ["127.0.0.1:4000"] })),
    ).toBe("address not allowed");
  });

  test("a name without addresses is 'host not found'; DNS errors reach the caller unchanged", async () => {
    expect(
      await reasonOf(
        vetDestination(new URL("https://nowhere.example.com/"), { allowedHosts: [], resolve: answering() }),
      ),
    ).toBe("host not found");
    const failing: Resolver = async () => {
      throw Object.assign(new Error("queryA EAI_AGAIN"), { code: "EAI_AGAIN" });
    };
    await expect(
      vetDestination(new URL("https://flaky.example.com/"), { allowedHosts: [], resolve: failing }),
    ).rejects.toMatchObject({ code: "EAI_AGAIN" });
  });
});

test("pinnedLookup answers every lookup with the vetted address only", () => {
  const target: LookupAddress = { address: "93.184.215.14", family: 4 };
  const lookup = pinnedLookup(target) as (
    host: string,
    options: { all?: boolean },
    cb: (...args: unknown[]) => void,
  ) => void;
  const seen: unknown[][] = [];
  lookup("attacker.example", {}, (...args) => seen.push(args));
  lookup("attacker.example", { all: true }, (...args) => seen.push(args));
  expect(seen).toEqual([
    [null, "93.184.215.14", 4],
    [null, [target]],
  ]);
});
