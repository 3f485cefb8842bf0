/**
 * Test certificates made with `openssl` in a temp dir: a CA, a server certificate for
 * 127.0.0.1/localhost and a client certificate (mTLS), all signed by the CA, plus a second,
 * unrelated CA. CI installs openssl; a missing binary fails the test (no skip).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  readonly dir: string;
  /** File paths, for OTEL_EXPORTER_OTLP_* variables. */
  readonly files: {
    readonly ca: string;
    readonly otherCa: string;
    readonly clientCert: string;
    readonly clientKey: string;
    readonly serverCert: string;
    readonly serverKey: string;
  };
  /** PEM texts, for servers. */
  readonly pem: { readonly ca: string; readonly serverCert: string; readonly serverKey: string };
  dispose(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    "req",
    "-x509",
    "-new",
    ...EC,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-subj",
    `/CN=cline-otel test ${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
}

function makeLeaf(dir: string, name: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, [
    "req",
    "-new",
    ...EC,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${name}`,
  ]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-set_serial",
    String(Date.now()),
    "-days",
    "2",
    "-out",
    `${name}.crt`,
    "-extfile",
    `${name}.ext`,
  ]);
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "cline-otel-pki-"));
  makeCa(dir, "ca");
  makeCa(dir, "other-ca");
  makeLeaf(
    dir,
    "server",
    "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
  );
  makeLeaf(dir, "client", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
  const f = (n: string) => join(dir, n);
  const read = (n: string) => readFileSync(f(n), "utf8");
  return {
    dir,
    files: {
      ca: f("ca.crt"),
      otherCa: f("other-ca.crt"),
      clientCert: f("client.crt"),
      clientKey: f("client.key"),
      serverCert: f("server.crt"),
      serverKey: f("server.key"),
    },
    pem: { ca: read("ca.crt"), serverCert: read("server.crt"), serverKey: read("server.key") },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
