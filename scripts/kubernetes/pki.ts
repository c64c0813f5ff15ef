// The one-node cluster's certificates, made with openssl for one run (valid 2 days): a CA, the API server's serving
// certificate, one client certificate (system:masters) that every host component and the tests use, and the
// service-account signing key.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../../infra/src/process.ts";

export interface Pki {
  dir: string;
  ca: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await runCommand(["openssl", ...args], { cwd });
}

async function signed(dir: string, name: string, subject: string, ext: string): Promise<void> {
  await openssl(["genrsa", "-out", `${name}.key`, "2048"], dir);
  await openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], dir);
  writeFileSync(join(dir, `${name}.ext`), ext);
  await openssl(
    ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2"].concat(
      ["-extfile", `${name}.ext`, "-out", `${name}.crt`],
    ),
    dir,
  );
}

export async function makePki(dir: string, nodeIp: string, serviceIp: string): Promise<Pki> {
  await openssl(["genrsa", "-out", "ca.key", "2048"], dir);
  await openssl(
    ["req", "-x509", "-new", "-nodes", "-key", "ca.key", "-subj", "/CN=pss-k8s-ca", "-days", "2", "-out", "ca.crt"],
    dir,
  );
  const sans = [
    `IP:${nodeIp}`,
    `IP:${serviceIp}`,
    "IP:127.0.0.1",
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
  ].join(",");
  await signed(
    dir,
    "apiserver",
    "/CN=kube-apiserver",
    `subjectAltName=${sans}\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
  );
  await signed(
    dir,
    "admin",
    "/O=system:masters/CN=pss-admin",
    "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
  );
  await openssl(["genrsa", "-out", "sa.key", "2048"], dir);
  await openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
  const p = (f: string) => join(dir, f);
  return {
    dir,
    ca: p("ca.crt"),
    caKey: p("ca.key"),
    apiserverCert: p("apiserver.crt"),
    apiserverKey: p("apiserver.key"),
    adminCert: p("admin.crt"),
    adminKey: p("admin.key"),
    saKey: p("sa.key"),
    saPub: p("sa.pub"),
  };
}

export function writeKubeconfig(file: string, server: string, pki: Pki): void {
  writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "  - name: pss",
      "    cluster:",
      `      server: ${server}`,
      `      certificate-authority: ${pki.ca}`,
      "users:",
      "  - name: pss-admin",
      "    user:",
      `      client-certificate: ${pki.adminCert}`,
      `      client-key: ${pki.adminKey}`,
      "contexts:",
      "  - name: pss",
      "    context: { cluster: pss, user: pss-admin }",
      "current-context: pss",
      "",
    ].join("\n"),
  );
}
