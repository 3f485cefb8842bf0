import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger, LedgerError } from "../../src/ledger/ledger.ts";
import { LEDGER_APPLICATION_ID, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { ROOT } from "../helpers/cli.ts";
import { event, observation, SOURCE } from "../helpers/events.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "durable-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("ledger durability", () => {
  // Builds before the baseline numbered their schemas 1..16 and were never released: their
  // ledgers are refused, untouched, with the move that starts a new one (history is re-read).
  const refused = (fixture: () => void) => {
    fixture();
    const path = join(dir, LEDGER_FILE);
    const before = readFileSync(path);
    for (const readOnly of [false, true]) {
      const err = (() => {
        try {
          Ledger.open(dir, { readOnly }).close();
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(LedgerError);
      expect((err as LedgerError).code).toBe("too-old");
      const message = (err as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toContain(`mv ${path} ${path}.old`);
      expect(message).toMatch(/older, unreleased cline-otel .*re-reads all history from Cline's files/);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
  };

  it("a ledger of the first old schema (user_version 1, like the baseline) is refused, left as it is", () => {
    refused(() => copyFileSync(join(ROOT, "fixtures/ledger/v1/ledger.sqlite"), join(dir, LEDGER_FILE)));
  });

  it("a ledger of the last old schema (v16: the baseline's tables, no application id) is refused", () => {
    refused(() => {
      Ledger.open(dir).close();
      const db = new Database(join(dir, LEDGER_FILE));
      db.pragma("application_id = 0");
      db.pragma("user_version = 16");
      db.close();
    });
  });

  it("a baseline ledger carries the application id that tells it from the old numbering", () => {
    Ledger.open(dir).close();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db.pragma("application_id", { simple: true })).toBe(LEDGER_APPLICATION_ID);
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    // v2: cline.client in every series key, the folded pass's position; v3: the outcome 'rejected',
    // the report rollup and the file edits; v4: what Cline delivered in the rollup; v5: an edit row without
    // its call key; v6: a document's new edits as one pack; v7: the delivered series folded at read;
    // v8: an edit kept once by its call's row; v9: the activity series in a cumulative export's pages
    // (src/ledger/schema.ts).
    expect(SCHEMA_VERSION).toBe(9);
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
