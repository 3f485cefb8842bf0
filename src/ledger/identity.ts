import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/** Where Linux keeps the machine's stable id (systemd, then D-Bus). */
const MACHINE_ID_FILES = ["/etc/machine-id", "/var/lib/dbus/machine-id"];

/**
 * This host's stable identity: the machine id where the OS has one (Linux), else the host name.
 * It only ever leaves the process hashed (machine-id(5): expose an application-specific hash,
 * never the id itself).
 */
export function hostIdentity(readFile: (path: string) => string = (p) => readFileSync(p, "utf8")): string {
  for (const f of MACHINE_ID_FILES) {
    let id: string;
    try {
      id = readFile(f).trim();
    } catch (e) {
      // Absent or unreadable on this OS: the next source, and the host name last.
      if (["ENOENT", "ENOTDIR", "EACCES", "EPERM"].includes((e as { code?: string }).code ?? "")) continue;
      throw e;
    }
    if (/^[0-9a-f]{32}$/i.test(id)) return `machine-id:${id.toLowerCase()}`;
  }
  return `hostname:${hostname()}`;
}

/** RFC 4122 name-based UUID namespace of cline-otel instance ids (a fixed random UUID). */
const NAMESPACE = Buffer.from("6f1d4c8e2b7a4e5f9c3d0a1b2c3d4e5f", "hex");

/**
 * The `service.instance.id` a new ledger records: a version-5 UUID of this host and the Cline
 * directories it reads. A ledger that is lost and rebuilt on the same machine for the same
 * Cline data gets the same id, so its series continue the streams it had (docs/design-export.md,
 * "A lost or rebuilt ledger"), while two machines, or two Cline homes, never share one.
 */
export function deriveInstanceId(clineDirs: readonly string[], host: string = hostIdentity()): string {
  // node:crypto at the call (a ledger's creation), not when the ledger module loads: ~10 ms of
  // every command's start-up.
  const h = process.getBuiltinModule("node:crypto").createHash("sha1");
  h.update(NAMESPACE);
  h.update(JSON.stringify([host, ...clineDirs]));
  const b = h.digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x50; // version 5
  b[8] = ((b[8] as number) & 0x3f) | 0x80; // RFC 4122 variant
  const x = b.toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
