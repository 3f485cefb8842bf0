import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openLedgerDb, WRITER_CACHE_KIB } from "../../src/ledger/open.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ledger-pragmas-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("writer connection pragmas (peak RSS of a backfill)", () => {
  it("bounds the writer's page cache to WRITER_CACHE_KIB, below better-sqlite3's 16 MB default", () => {
    const opened = openLedgerDb(dir);
    try {
      expect(opened.db.pragma("cache_size", { simple: true })).toBe(-WRITER_CACHE_KIB);
      expect(WRITER_CACHE_KIB).toBeLessThan(16_000);
      expect(opened.db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(opened.db.pragma("mmap_size", { simple: true })).toBe(0); // no mapped ledger pages in RSS
    } finally {
      opened.db.close();
      opened.lock?.release(true);
    }
  });
});
