// Admin CLI (`npm run --silent admin -- <group> <action> [flags]`): partnership set-up and operations (dead
// letters, reindex, media retries, outbox). stdout carries exactly one JSON document per successful command
// when it is not a terminal (or with --json), tables when it is; everything else goes to stderr. With no URLs
// in the environment the local infrastructure `npm start` uses is taken (admin-config.ts). Exit codes: 0 ok,
// 1 failure (not found, configuration, server), 2 usage error.
import {
  ConfigError,
  createKafka,
  createOpenSearch,
  createPostgres,
  createRedis,
  silentLogger,
} from "@pss/service-kit";
import type { Client } from "@opensearch-project/opensearch";
import type Redis from "ioredis";
import type { Kafka } from "@pss/service-kit";
import type postgres from "postgres";
import { loadAdminConfig, SERVER_VARIABLES, type AdminConfig } from "./admin-config.ts";
import { COMMANDS, USAGE, UsageError, type Command, type CommandContext, type Flags } from "./commands.ts";
import { findLocalInfra, localServersDown } from "./local-infra.ts";
import { formatHuman, formatJson } from "./output.ts";
import { AdminError } from "@pss/api/partner-admin";

export { loadAdminConfig } from "./admin-config.ts";

/** `--json` anywhere forces JSON; it is not a command flag. */
export function splitGlobalFlags(argv: string[]): { argv: string[]; json: boolean } {
  return { argv: argv.filter((a) => a !== "--json"), json: argv.includes("--json") };
}

/** `<group> <action> --flag value --switch`; anything not declared by the command is an error, not ignored. */
export function parseArgs(argv: string[]): { name: string; command: Command; flags: Flags } {
  const [group, ...afterGroup] = argv;
  if (!group || group.startsWith("-")) throw new UsageError("missing command");
  // One-word commands (reindex) take flags right after the group.
  const single = COMMANDS[group];
  const action = single ? undefined : afterGroup[0];
  const rest = single ? afterGroup : afterGroup.slice(1);
  const name = single ? group : `${group} ${action ?? ""}`.trim();
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command '${name}'`);
  const flags: Flags = {};
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!;
    if (!token.startsWith("--")) throw new UsageError(`unexpected argument '${token}'`);
    const eq = token.indexOf("=");
    const flag = eq === -1 ? token.slice(2) : token.slice(2, eq);
    const refused = command.refused?.[flag];
    if (refused) throw new UsageError(refused);
    const kind = command.flags[flag];
    if (!kind) throw new UsageError(`unknown flag '--${flag}' for '${name}'`);
    if (flags[flag] !== undefined) throw new UsageError(`--${flag} given more than once`);
    if (kind === "boolean") {
      if (eq !== -1) throw new UsageError(`--${flag} takes no value`);
      flags[flag] = true;
      continue;
    }
    const value = eq !== -1 ? token.slice(eq + 1) : rest[++i];
    // A value that looks like a flag almost always means the real value was forgotten.
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${flag} needs a value`);
    flags[flag] = value;
  }
  const missing = (command.required ?? []).filter((f) => flags[f] === undefined);
  if (missing.length > 0) throw new UsageError(`'${name}' requires ${missing.map((f) => `--${f}`).join(", ")}`);
  if (command.exactlyOne) {
    const given = command.exactlyOne.filter((f) => flags[f] !== undefined);
    if (given.length !== 1)
      throw new UsageError(`'${name}' needs exactly one of ${command.exactlyOne.map((f) => `--${f}`).join(", ")}`);
  }
  return { name, command, flags };
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, "; ");

/** Clients are created on first use, so a command connects only to what it talks to. */
function createContext(
  config: AdminConfig,
  readStdin: () => Promise<string>,
): CommandContext & { close(): Promise<void> } {
  let sql: postgres.Sql | undefined;
  let redis: Redis | undefined;
  let kafka: Kafka | undefined;
  let opensearch: Client | undefined;
  return {
    config,
    logger: silentLogger,
    sql: () => (sql ??= createPostgres(config.postgres, { applicationName: "pss-admin" })),
    redis() {
      if (!redis) {
        // Lazy: connected when first used. Connection errors surface where it is used, not as ioredis noise.
        redis = createRedis(config.redis, { lazy: true });
        redis.on("error", () => {});
      }
      return redis;
    },
    kafka: () => (kafka ??= createKafka(config.kafka, silentLogger)),
    opensearch: () => (opensearch ??= createOpenSearch(config.opensearch)),
    readStdin,
    warn: (message) => console.error(`admin: ${message}`),
    async close() {
      redis?.disconnect();
      await opensearch?.close().catch(() => {});
      await sql?.end({ timeout: 5 });
    },
  };
}

export interface MainIo {
  env: Record<string, string | undefined>;
  stdoutIsTty: boolean;
  write(text: string): Promise<void>;
  readStdin(): Promise<string>;
}

export async function main(rawArgv: string[], io: MainIo): Promise<number> {
  const { argv, json } = splitGlobalFlags(rawArgv);
  if (argv.length === 1 && ["--help", "-h", "help"].includes(argv[0]!)) {
    console.error(USAGE);
    return 0;
  }
  let parsed: ReturnType<typeof parseArgs> | undefined;
  let config: AdminConfig;
  let local: Awaited<ReturnType<typeof findLocalInfra>> | undefined;
  try {
    parsed = parseArgs(argv);
    local = await findLocalInfra();
    config = loadAdminConfig(io.env, parsed.command.needs, local?.urls, parsed.command.reads?.(parsed.flags));
    const urls = {
      postgres: config.postgres.url,
      redis: config.redis.url,
      kafka: config.kafka.brokers.join(","),
      opensearch: config.opensearch.url,
      s3: config.s3?.endpoint ?? "",
    };
    const down = await localServersDown(config.local, (s) => urls[s]);
    if (down) {
      console.error(`admin: ${down}`);
      return 1;
    }
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`admin: ${err.message} (run 'admin --help' for usage)`);
      return 2;
    }
    if (err instanceof ConfigError) {
      const unset = parsed?.command.needs.map((s) => SERVER_VARIABLES[s]).filter((v) => !io.env[v]) ?? [];
      const hint =
        !local && unset.length > 0 ? ` (this installation has no local infrastructure: set ${unset.join(", ")})` : "";
      console.error(`admin: invalid configuration: ${err.problems.join("; ")}${hint}`);
      return 1;
    }
    throw err;
  }

  const ctx = createContext(config, io.readStdin);
  try {
    const result = await parsed.command.run(ctx, parsed.flags);
    await io.write(json || !io.stdoutIsTty ? formatJson(result) : formatHuman(result));
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err instanceof AdminError && err.code === "invalid_argument")) {
      console.error(`admin: ${err.message}`);
      return 2;
    }
    if (
      err instanceof AdminError ||
      (err instanceof Error && (err.name === "ReindexError" || err.name === "BackupError"))
    ) {
      console.error(`admin: ${err.message}`);
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    console.error(`admin: ${parsed.name} failed: ${oneLine(message)}`);
    return 1;
  } finally {
    await ctx.close();
  }
}

// Guarded so the parsing and configuration can be imported without running a command.
if (import.meta.main) {
  const code = await main(process.argv.slice(2), {
    env: process.env,
    stdoutIsTty: process.stdout.isTTY === true,
    // Awaited so the output is fully written before process.exit.
    write: async (text) => void (await Bun.write(Bun.stdout, text)),
    readStdin: () => Bun.stdin.text(),
  });
  process.exit(code);
}
