import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger, LedgerError } from "../../src/ledger/ledger.ts";
import { ledgerVersion, migrate } from "../../src/ledger/migrate.ts";
import { LEDGER_APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { event, observation } from "../helpers/events.ts";
import { v1Ledger } from "../helpers/v1-ledger.ts";

/** What the next schema change could look like: a column with a backfill, and a new table. */
const SAMPLE_NEXT = `
  ALTER TABLE events ADD COLUMN sample_flag INTEGER NOT NULL DEFAULT 0;
  UPDATE events SET sample_flag = input > 0;
  CREATE TABLE sample_v2 (id INTEGER PRIMARY KEY, note TEXT NOT NULL) STRICT;
`;
const WITH_NEXT: readonly string[] = [...MIGRATIONS, SAMPLE_NEXT];
const NEXT = MIGRATIONS.length + 1;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "migrate-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const fixedId = () => "instance-1";

describe("ledger migrations (the mechanism kept for the next change)", () => {
  it("a current ledger with rows takes a sample next step in place: rows, identity and application id kept", () => {
    const l = Ledger.open(dir);
    const id = l.instanceId;
    l.commit(observation([event("a"), event("b")]));
    l.close();
    const path = join(dir, LEDGER_FILE);
    const db = new Database(path);
    migrate(db, path, () => 5, fixedId, WITH_NEXT);
    expect(db.pragma("user_version", { simple: true })).toBe(NEXT);
    expect(db.pragma("application_id", { simple: true })).toBe(LEDGER_APPLICATION_ID);
    expect(db.prepare("SELECT COUNT(*) AS n, SUM(sample_flag) AS f FROM events").get()).toEqual({
      n: 2,
      f: 2,
    });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'instance_id'").get()).toEqual({ value: id });
    // Run again: nothing to do (a migration runs once).
    migrate(db, path, () => 6, fixedId, WITH_NEXT);
    expect(db.prepare("SELECT COUNT(*) AS n FROM sample_v2").get()).toEqual({ n: 0 });
    db.close();
  });

  it("a new ledger runs every step in one transaction and records its meta once", () => {
    const path = join(dir, "fresh.sqlite");
    const db = new Database(path);
    migrate(db, path, () => 7, fixedId, WITH_NEXT);
    expect(db.pragma("user_version", { simple: true })).toBe(NEXT);
    expect(db.prepare("SELECT key, value FROM meta ORDER BY key").all()).toEqual([
      { key: "created_ms", value: "7" },
      { key: "instance_id", value: "instance-1" },
      { key: "stream_start_ns", value: "7000000" },
    ]);
    db.close();
  });

  it("a failing step rolls every step back: the ledger stays at its version", () => {
    Ledger.open(dir).close();
    const path = join(dir, LEDGER_FILE);
    const db = new Database(path);
    expect(() => migrate(db, path, () => 1, fixedId, [...WITH_NEXT, "CREATE TABLE sample_v2 (x)"])).toThrow();
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'sample_v2'").all()).toEqual([]);
    db.close();
  });

  it("a ledger at the next version is too new for this build", () => {
    Ledger.open(dir).close();
    const path = join(dir, LEDGER_FILE);
    const db = new Database(path);
    migrate(db, path, () => 1, fixedId, WITH_NEXT);
    expect(() => ledgerVersion(db, path)).toThrowError(LedgerError);
    db.close();
    expect(() => Ledger.open(dir)).toThrowError(
      new RegExp(`schema version ${NEXT}, newer than this cline-otel understands \\(${MIGRATIONS.length}\\)`),
    );
  });
});

describe("v2: the position of a cumulative pass over folded series (export_backfill.after_key)", () => {
  it("a v1 ledger with events and a pass in progress upgrades in place; the pass reads back as it was", () => {
    // Rows of a v1 build: an event and a paged pass by id, in the v1 columns.
    const v1dir = v1Ledger(dir, (stateDir) => {
      const l1 = Ledger.open(stateDir);
      l1.commit(observation([event("a")]));
      l1.close();
    });
    const path = join(v1dir, LEDGER_FILE);
    const raw = new Database(path);
    expect(raw.pragma("user_version", { simple: true })).toBe(1);
    raw
      .prepare(
        `INSERT INTO export_backfill (exporter, options, started_ms, event_watermark, call_watermark,
           capture_watermark, compaction_watermark, final_call_watermark, window_start_ns, phase, after_id,
           delivered, total) VALUES ('x', '{}', 7, 1, 0, 0, 0, 0, '5000000', 'tool', 42, 10, 20)`,
      )
      .run();
    raw.close();
    const l = Ledger.open(v1dir);
    expect(l.counts().events).toBe(1);
    const saved = l.backfills?.get("x");
    expect(saved).toMatchObject({ phase: "tool", afterId: 42, delivered: 10, total: 20 });
    expect(saved?.afterKey).toBeUndefined();
    // A folded pass's composite key round-trips.
    if (saved) l.backfills?.put({ ...saved, afterKey: ["lead", "/p", "m", "anthropic", "read_files", 1] });
    expect(l.backfills?.get("x")?.afterKey).toEqual(["lead", "/p", "m", "anthropic", "read_files", 1]);
    l.close();
    const db = new Database(path, { readonly: true });
    // Through every later step too (v3 rebuilds export_backfill: the pass survives it).
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("a fresh ledger has the same export_backfill columns as an upgraded one", () => {
    const cols = (p: string) => {
      const db = new Database(p, { readonly: true });
      const c = db.prepare("SELECT name, type, \"notnull\" FROM pragma_table_info('export_backfill')").all();
      db.close();
      return c;
    };
    Ledger.open(dir).close();
    const up = join(dir, "up.sqlite");
    const v1 = new Database(up);
    migrate(v1, up, () => 5, fixedId, MIGRATIONS.slice(0, 1));
    migrate(v1, up, () => 5, fixedId);
    v1.close();
    expect(cols(up)).toEqual(cols(join(dir, LEDGER_FILE)));
    expect(cols(up).map((c) => (c as { name: string }).name)).toContain("after_key");
  });
});
