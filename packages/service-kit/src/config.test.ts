import { describe, expect, test } from "bun:test";
import {
  ConfigError,
  createEnvReader,
  readOpenSearchConfig,
  readPostgresConfig,
  readRedisConfig,
  readSearchAlias,
} from "./config.ts";

function problemsOf(env: Record<string, string>, read: (r: ReturnType<typeof createEnvReader>) => unknown): string[] {
  const r = createEnvReader(env);
  read(r);
  try {
    r.done();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

describe("env reader", () => {
  test("a DATABASE_URL that fails to parse is reported without its password", () => {
    const problems = problemsOf({ DATABASE_URL: "postgres://pss:s3cret@db:notaport/pss" }, (r) =>
      readPostgresConfig(r),
    );
    expect(problems).toEqual(["DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'"]);
  });

  test("REDIS_URL and OPENSEARCH_URL that fail to parse are reported without their passwords", () => {
    const problems = problemsOf(
      { REDIS_URL: "redis://default:s3cret@redis:port", OPENSEARCH_URL: "http://admin:s3#cret@open search:9200" },
      (r) => {
        readRedisConfig(r);
        readOpenSearchConfig(r);
      },
    );
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).not.toContain("s3");
    expect(problems[0]).toBe("REDIS_URL must be a URL, got 'redis://default:***@redis:port'");
  });

  test("the whole error message, as a service prints it at boot, holds no password", () => {
    const r = createEnvReader({ DATABASE_URL: "postgres://pss:p@ss:w/rd@db:5432/pss", DATABASE_POOL_SIZE: "many" });
    readPostgresConfig(r);
    expect(() => r.done()).toThrow(ConfigError);
    try {
      r.done();
    } catch (err) {
      expect((err as Error).message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:5432/pss'");
      expect((err as Error).message).toContain("DATABASE_POOL_SIZE must be an integer, got 'many'");
      expect((err as Error).message).not.toContain("ss:w");
    }
  });

  test("a URL with a wrong scheme names only the scheme", () => {
    expect(problemsOf({ DATABASE_URL: "mysql://root:s3cret@db/pss" }, (r) => readPostgresConfig(r))).toEqual([
      "DATABASE_URL must use postgres: or postgresql:, got 'mysql:'",
    ]);
  });
});

describe("loadConfigOrExit", () => {
  test("a bad environment exits 1 with the service's name and every problem on stderr, nothing on stdout", async () => {
    const script = `import { ConfigError, loadConfigOrExit } from ${JSON.stringify(import.meta.dir + "/config.ts")};
      loadConfigOrExit("demo", () => { throw new ConfigError(["A is required", "B must be a number"]); });
      console.log("started");`;
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect({ code, out, err: err.trim() }).toEqual({
      code: 1,
      out: "",
      err: "demo: invalid configuration:\n  - A is required\n  - B must be a number",
    });
  });
});

describe("readSearchAlias", () => {
  test("takes an OpenSearch index name or the fallback, and refuses anything else by name", () => {
    expect(readSearchAlias(createEnvReader({}), "listings")).toBe("listings");
    expect(readSearchAlias(createEnvReader({ OPENSEARCH_INDEX_ALIAS: "pss-listings.v2" }), "listings")).toBe(
      "pss-listings.v2",
    );
    expect(problemsOf({ OPENSEARCH_INDEX_ALIAS: "Bad Alias" }, (r) => readSearchAlias(r, "listings"))).toEqual([
      "OPENSEARCH_INDEX_ALIAS must be lower case letters, digits, '.', '_' or '-', got 'Bad Alias'",
    ]);
  });
});
