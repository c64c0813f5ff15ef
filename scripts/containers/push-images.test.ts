import { describe, expect, test } from "bun:test";
import { parseRegistry, pushedDigest, releaseVersion, repositoryName } from "./push-images.ts";

describe("npm run images -- --push", () => {
  test("takes a registry address with an optional port and path, and refuses a scheme, spaces or nothing", () => {
    expect(parseRegistry("registry.example.com")).toBe("registry.example.com");
    expect(parseRegistry("127.0.0.1:5000/team/")).toBe("127.0.0.1:5000/team");
    for (const bad of [undefined, "", "https://registry.example.com", "registry example.com", "--other"])
      expect(() => parseRegistry(bad)).toThrow(/--push needs a registry address/);
  });

  test("names the service image after the chart and the others pss-<image>, tagged with the chart's appVersion", () => {
    expect(repositoryName("PSS_IMAGE")).toBe("partner-syndication-service");
    expect(repositoryName("PSS_KAFKA_IMAGE")).toBe("pss-kafka");
    expect(releaseVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("reads the digest from docker push's last line", () => {
    const digest = `sha256:${"0123456789abcdef".repeat(4)}`;
    expect(pushedDigest(`abc: Pushed\n0.1.0: digest: ${digest} size: 2412\n`)).toBe(digest);
    expect(pushedDigest("denied: requested access to the resource is denied")).toBeNull();
  });
});
