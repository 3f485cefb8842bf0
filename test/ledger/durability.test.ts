import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { ROOT } from "../helpers/cli.ts";
import { event, observation, SOURCE } from "../helpers/events.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "durable-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("ledger durability", () => {
  it("a first-version ledger migrates in place, keeping every event, total and checkpoint", () => {
    copyFileSync(join(ROOT, "fixtures/ledger/v1/ledger.sqlite"), join(dir, LEDGER_FILE));
    const l = Ledger.open(dir);
    expect(l.instanceId).toBe("0b6c5d1e-2f3a-4b5c-8d7e-9f0a1b2c3d4e");
    expect(l.streamStartNs).toBe(1_796_000_000_000_000_000n);
    expect(l.counts()).toEqual({ events: 2, calls: 0, sources: 1 });
    expect(l.usageSeries()[0]).toMatchObject({ input: 300, events: 2 });
    expect(l.getCheckpoint("/s/s1/s1.messages.json")).toMatchObject({ size: 1234, ino: 42 });
    // Still a working ledger: the old events dedup, new ones land.
    const r = l.commit(observation([event("m1", { dedupKey: "cline|s1|lead|m1" }), event("m3")]));
    expect(r.eventsAdded).toBe(1);
    l.close();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("a full disk mid-commit leaves the ledger consistent; the same source commits whole later", () => {
    // SQLITE_FULL is exactly what a full disk gives SQLite; max_page_count produces it on demand.
    Ledger.open(dir).close();
    const probe = new Database(join(dir, LEDGER_FILE), { readonly: true });
    const pages = probe.pragma("page_count", { simple: true }) as number;
    probe.close();
    const small = Ledger.open(dir, { maxPageCount: pages + 60 });
    const big = (i: number) =>
      observation(
        Array.from({ length: 200 }, (_, j) =>
          event(`m${i}_${j}`, { sourcePath: `/very/long/path/${"x".repeat(200)}/${i}` }),
        ),
        [],
        i,
        { ...SOURCE, path: `/s/${i}/${i}.messages.json` },
      );
    let failedAt = -1;
    for (let i = 0; i < 100; i++) {
      try {
        small.commit(big(i));
      } catch (e) {
        expect((e as { code?: string }).code).toBe("SQLITE_FULL");
        failedAt = i;
        break;
      }
    }
    expect(failedAt).toBeGreaterThan(0);
    const counts = small.counts();
    // All or nothing: every committed source has all its 200 events and its checkpoint.
    expect(counts.events).toBe(failedAt * 200);
    expect(counts.sources).toBe(failedAt);
    expect(small.getCheckpoint(`/s/${failedAt}/${failedAt}.messages.json`)).toBeUndefined();
    small.close();
    const again = Ledger.open(dir);
    expect(again.commit(big(failedAt)).eventsAdded).toBe(200);
    expect(again.counts().events).toBe((failedAt + 1) * 200);
    again.close();
  });
});
