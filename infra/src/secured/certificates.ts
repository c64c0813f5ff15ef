// The secured profile's certificates, made once per data directory with openssl: a CA of its own, one server
// certificate for every secured server (loopback: DNS localhost and IP 127.0.0.1, so clients verify the host name
// as with verify-full), and a client certificate for mutual TLS. Private keys are PKCS#8 PEM, which PostgreSQL,
// Redis, Kafka (PEM key stores) and OpenSearch all read. Never for anything but this machine's loopback servers.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Certificates {
  dir: string;
  /** The CA every client of the secured profile trusts. */
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** Key then certificate in one file: a Kafka PEM key store. */
  serverKeyStoreFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

function openssl(args: string[], cwd: string): void {
  const run = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr.toString().trim()}`);
}

/** A certificate signed by the CA in `dir`, for `cn`, with the given extensions. */
function signed(dir: string, name: string, cn: string, extensions: string[]): void {
  openssl(
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`],
    dir,
  );
  writeFileSync(join(dir, `${name}.ext`), `${extensions.join("\n")}\n`);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "825",
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
  chmodSync(join(dir, `${name}.key`), 0o600);
}

/** A CA (certificate and key) in `dir`, named `name` (ca.pem, ca.key unless given). */
export function makeCertificateAuthority(dir: string, cn: string, name = "ca"): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      "-days",
      "3650",
      "-subj",
      `/CN=${cn}`,
    ],
    dir,
  );
  chmodSync(join(dir, `${name}.key`), 0o600);
  return join(dir, `${name}.pem`);
}

/** The certificates under `dir`, made on first use (a complete set is kept: its marker is written last). */
export function ensureCertificates(dir: string): Certificates {
  const certs: Certificates = {
    dir,
    caFile: join(dir, "ca.pem"),
    serverCertFile: join(dir, "server.pem"),
    serverKeyFile: join(dir, "server.key"),
    serverKeyStoreFile: join(dir, "server-keystore.pem"),
    clientCertFile: join(dir, "client.pem"),
    clientKeyFile: join(dir, "client.key"),
  };
  const marker = join(dir, ".complete");
  if (existsSync(marker)) return certs;
  makeCertificateAuthority(dir, "pss secured profile CA");
  signed(dir, "server", "localhost", [
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    // Kafka brokers and OpenSearch nodes are also each other's clients.
    "extendedKeyUsage=serverAuth,clientAuth",
  ]);
  signed(dir, "client", "pss-client", [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=clientAuth",
  ]);
  writeFileSync(
    certs.serverKeyStoreFile,
    readFileSync(certs.serverKeyFile, "utf8") + readFileSync(certs.serverCertFile, "utf8"),
    { mode: 0o600 },
  );
  writeFileSync(marker, new Date().toISOString());
  return certs;
}
