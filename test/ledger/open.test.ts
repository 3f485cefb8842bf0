import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deriveInstanceId, hostIdentity } from "../../src/ledger/identity.ts";
import { LEDGER_FILE, Ledger, LedgerError } from "../../src/ledger/ledger.ts";
import { event, observation } from "../helpers/events.ts";
import { damageIndex } from "../helpers/ledger-damage.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ledger-open-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const DIRTY = "ledger.dirty";

describe("integrity check (PRAGMA quick_check, O(ledger size))", () => {
  it("is skipped after a clean close, run after an unclean shutdown, and on request", () => {
    const fresh = Ledger.open(dir);
    expect(fresh.integrityChecked).toBe(false); // a new ledger has nothing to check
    expect(existsSync(join(dir, DIRTY))).toBe(true);
    fresh.commit(observation([event("a")]));
    fresh.close();
    expect(existsSync(join(dir, DIRTY))).toBe(false);
    const clean = Ledger.open(dir);
    expect(clean.integrityChecked).toBe(false);
    clean.close();
    // A writer that died leaves its marker behind (kill -9, power loss).
    writeFileSync(join(dir, DIRTY), "12345\n");
    const afterCrash = Ledger.open(dir);
    expect(afterCrash.integrityChecked).toBe(true);
    expect(afterCrash.counts().events).toBe(1);
    afterCrash.close();
    const asked = Ledger.open(dir, { integrityCheck: "always" });
    expect(asked.integrityChecked).toBe(true);
    asked.close();
    const ro = Ledger.open(dir, { readOnly: true });
    expect(ro.integrityChecked).toBe(false); // a reader cannot tell a crash from a running writer
    ro.close();
  });

  it("a damaged ledger found by the check is reported with the fix and left untouched", () => {
    const l = Ledger.open(dir);
    for (let i = 0; i < 50; i++)
      l.commit(observation([event(`m${i}`, { sourcePath: "x".repeat(500) })], [], i));
    l.close();
    // Damage the events index's pages behind SQLite's back: the header still reads fine.
    damageIndex(join(dir, LEDGER_FILE), "events_ts");
    writeFileSync(join(dir, DIRTY), "1\n");
    const before = readFileSync(join(dir, LEDGER_FILE));
    let err: unknown;
    try {
      Ledger.open(dir).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe("corrupt");
    expect((err as Error).message).toContain("mv ");
    expect(readFileSync(join(dir, LEDGER_FILE)).equals(before)).toBe(true);
  });
});

describe("instance id", () => {
  it("a new ledger derives its id from the host and its identity; a rebuilt one gets the same; an existing one keeps its own", () => {
    const dirs = ["/home/a/.cline/data/sessions", "/home/a/.cline/data/db"];
    const l = Ledger.open(dir, { identity: dirs });
    expect(l.instanceId).toBe(deriveInstanceId(dirs));
    l.close();
    const again = Ledger.open(dir, { identity: ["/elsewhere"] });
    expect(again.instanceId).toBe(deriveInstanceId(dirs));
    again.close();
    // Lost and rebuilt: the same identity again.
    rmSync(dir, { recursive: true, force: true });
    const rebuilt = Ledger.open(dir, { identity: dirs });
    expect(rebuilt.instanceId).toBe(deriveInstanceId(dirs));
    rebuilt.close();
    // Without an identity (tests, tools): random, distinct.
    const other = mkdtempSync(join(tmpdir(), "ledger-open-"));
    const r = Ledger.open(other);
    expect(r.instanceId).not.toBe(deriveInstanceId(dirs));
    r.close();
    rmSync(other, { recursive: true, force: true });
  });

  it("is derived from the host and the Cline dirs: stable, distinct, a UUID, never the raw machine id", () => {
    const dirs = ["/home/a/.cline/data/sessions", "/home/a/.cline/data/db"];
    const a = deriveInstanceId(dirs, "machine-id:0123456789abcdef0123456789abcdef");
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deriveInstanceId(dirs, "machine-id:0123456789abcdef0123456789abcdef")).toBe(a);
    expect(deriveInstanceId(dirs, "machine-id:ffffffffffffffffffffffffffffffff")).not.toBe(a);
    expect(deriveInstanceId(["/home/b/.cline/data/sessions", dirs[1] as string], "machine-id:0123")).not.toBe(
      deriveInstanceId(dirs, "machine-id:0123"),
    );
    expect(a.replaceAll("-", "")).not.toContain("0123456789abcdef");
  });

  it("host identity: the machine id when there is one, else the host name", () => {
    expect(hostIdentity(() => "0123456789ABCDEF0123456789abcdef\n")).toBe(
      "machine-id:0123456789abcdef0123456789abcdef",
    );
    const missing = () => {
      throw Object.assign(new Error("nope"), { code: "ENOENT" });
    };
    expect(hostIdentity(missing)).toMatch(/^hostname:/);
    expect(hostIdentity(() => "not-an-id")).toMatch(/^hostname:/);
  });
});
