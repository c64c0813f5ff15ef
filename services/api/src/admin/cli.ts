// Partnership-setup admin CLI (`npm run --silent admin -- <group> <action> [flags]`).
// stdout carries exactly one JSON object per successful command so it can be piped into jq or scripts;
// everything meant for humans goes to stderr. Exit codes: 0 ok, 1 failure (not found, configuration,
// database), 2 usage error.
import {
  ConfigError,
  createEnvReader,
  createPostgres,
  createRedis,
  readPostgresConfig,
  readRedisConfig,
  type PostgresConfig,
  type RedisConfig,
} from "@pss/service-kit";
import { AdminError, createPartnerAdmin, type PartnerAdmin } from "./partner-admin.ts";

const USAGE = `usage: admin <command> [flags]

commands:
  partners create --name <name> [--lead-tracking]
  keys create --partner <partnerId> [--lead-tracking]
  keys revoke --partner <partnerId> --key <apiKey>
  offices create --organization <organizationId> --name <name>
  brokers assign-office --partner <partnerId> --external-broker-id <id> --office <officeId>

environment: DATABASE_URL, REDIS_URL`;

class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;

interface Command {
  /** Flag name → whether it takes a value ("value") or is a switch ("boolean"). */
  flags: Record<string, "value" | "boolean">;
  required: string[];
  run(admin: PartnerAdmin, flags: Flags): Promise<object>;
}

function str(flags: Flags, name: string): string {
  return flags[name] as string;
}

function positiveInt(flags: Flags, name: string): number {
  const raw = str(flags, name);
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, got '${raw}'`);
  return n;
}

const COMMANDS: Record<string, Command> = {
  "partners create": {
    flags: { name: "value", "lead-tracking": "boolean" },
    required: ["name"],
    run: (admin, f) => admin.createPartner({ name: str(f, "name"), leadTracking: f["lead-tracking"] === true }),
  },
  "keys create": {
    flags: { partner: "value", "lead-tracking": "boolean" },
    required: ["partner"],
    run: (admin, f) => admin.createKey({ partnerId: str(f, "partner"), leadTracking: f["lead-tracking"] === true }),
  },
  "keys revoke": {
    flags: { partner: "value", key: "value" },
    required: ["partner", "key"],
    async run(admin, f) {
      const { cacheWarning } = await admin.revokeKey({ partnerId: str(f, "partner"), apiKey: str(f, "key") });
      if (cacheWarning) console.error(`admin: warning: ${cacheWarning}`);
      return { revoked: true };
    },
  },
  "offices create": {
    flags: { organization: "value", name: "value" },
    required: ["organization", "name"],
    run: (admin, f) => admin.createOffice({ organizationId: positiveInt(f, "organization"), name: str(f, "name") }),
  },
  "brokers assign-office": {
    flags: { partner: "value", "external-broker-id": "value", office: "value" },
    required: ["partner", "external-broker-id", "office"],
    run: (admin, f) =>
      admin.assignBrokerOffice({ partnerId: str(f, "partner"), externalBrokerId: str(f, "external-broker-id"), officeId: positiveInt(f, "office") }),
  },
};

/** `<group> <action> --flag value --switch`; anything not declared by the command is an error, not ignored. */
export function parseArgs(argv: string[]): { name: string; command: Command; flags: Flags } {
  const [group, action, ...rest] = argv;
  if (!group || group.startsWith("-")) throw new UsageError("missing command");
  const name = `${group} ${action ?? ""}`.trim();
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command '${name}'`);
  const flags: Flags = {};
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!;
    if (!token.startsWith("--")) throw new UsageError(`unexpected argument '${token}'`);
    const eq = token.indexOf("=");
    const flag = eq === -1 ? token.slice(2) : token.slice(2, eq);
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
  const missing = command.required.filter((f) => flags[f] === undefined);
  if (missing.length > 0) throw new UsageError(`'${name}' requires ${missing.map((f) => `--${f}`).join(", ")}`);
  return { name, command, flags };
}

/** The only place the CLI reads its environment. */
export function loadAdminConfig(env: Record<string, string | undefined>): { postgres: PostgresConfig; redis: RedisConfig } {
  const r = createEnvReader(env);
  // A one-shot command needs at most a couple of connections, whatever pool size the service uses.
  const postgres = { ...readPostgresConfig(r, 2), maxConnections: 2 };
  const redis = readRedisConfig(r);
  r.done();
  return { postgres, redis };
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, "; ");

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help")) {
    console.error(USAGE);
    return 0;
  }
  let parsed;
  let config;
  try {
    parsed = parseArgs(argv);
    config = loadAdminConfig(process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`admin: ${err.message} (run 'admin --help' for usage)`);
      return 2;
    }
    if (err instanceof ConfigError) {
      console.error(`admin: invalid configuration: ${err.problems.join("; ")}`);
      return 1;
    }
    throw err;
  }

  const sql = createPostgres(config.postgres, { applicationName: "pss-admin" });
  // Lazy: only `keys revoke` connects. Connection errors surface as the revoke warning, not as ioredis noise.
  const redis = createRedis(config.redis, { lazy: true });
  redis.on("error", () => {});
  try {
    const result = await parsed.command.run(createPartnerAdmin({ sql, redis }), parsed.flags);
    // Awaited so the JSON is fully written before process.exit.
    await Bun.write(Bun.stdout, `${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err instanceof AdminError && err.code === "invalid_argument")) {
      console.error(`admin: ${err.message}`);
      return 2;
    }
    if (err instanceof AdminError) {
      console.error(`admin: ${err.message}`);
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    console.error(`admin: ${parsed.name} failed: ${oneLine(message)}`);
    return 1;
  } finally {
    redis.disconnect();
    await sql.end({ timeout: 5 });
  }
}

// Guarded so parseArgs/loadAdminConfig can be imported without running a command.
if (import.meta.main) process.exit(await main(process.argv.slice(2)));
