/** state/taskHistory.json of the wrong shape: reported by a named code, never silently empty. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HISTORY_FILE, HistoryCache, historyEntries } from "../../../src/adapter/cline-tasks/history.ts";
import { taskHistorySchema } from "../../../src/adapter/cline-tasks/schema.ts";
import type { Problem } from "../../../src/adapter/types.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";

const scan = (text: string) => scanBuffer(Buffer.from(text), taskHistorySchema);

describe("historyEntries", () => {
  for (const [text, shape] of [
    ['{"not": "an array"}', "an object"],
    ["7", "a number"],
    ["null", "a null"],
  ] as const)
    it(`${text}: not-a-task-history, no entry`, () => {
      const r = historyEntries(scan(text), "/h");
      expect(r.entries.size).toBe(0);
      expect(r.problem).toEqual({
        path: "/h",
        code: "not-a-task-history",
        detail: `top-level value is ${shape}, not an array`,
      });
    });

  it("skips entries without a string id and counts them in one problem", () => {
    const r = historyEntries(
      scan('[null, 5, {"id": 12}, {"tokensIn": 1}, {"id": "1", "cwdOnTaskInitialization": "/p"}]'),
      "/h",
    );
    expect([...r.entries.keys()]).toEqual(["1"]);
    expect(r.problem?.code).toBe("invalid-history-entry");
    expect(r.problem?.detail).toBe("4 of 5 entries are not an object with a string id: skipped");
  });

  it("drops only the check of an entry whose totals are not counts", () => {
    const r = historyEntries(
      scan('[{"id": "1", "tokensIn": 1e300, "tokensOut": 1}, {"id": "2", "tokensIn": 3, "tokensOut": -1}]'),
      "/h",
    );
    expect(r.problem).toBeUndefined();
    expect([...r.entries.values()]).toEqual([{ project: "" }, { project: "" }]);
  });

  it("a good history has no problem", () => {
    const r = historyEntries(scan('[{"id": "1", "tokensIn": 3, "tokensOut": 4}]'), "/h");
    expect(r.problem).toBeUndefined();
    expect(r.entries.get("1")?.totals).toEqual({ tokensIn: 3, tokensOut: 4, cacheReads: 0, cacheWrites: 0 });
  });
});

describe("HistoryCache", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "cline-tasks-history-"));
    mkdirSync(join(root, "state"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("reports a history of the wrong shape at every read of that version, as a failed read is", async () => {
    writeFileSync(join(root, HISTORY_FILE), '{"not": "an array"}');
    const cache = new HistoryCache();
    for (let pass = 0; pass < 2; pass++) {
      const problems: Problem[] = [];
      expect((await cache.read(root, problems)).size).toBe(0);
      expect(problems.map((p) => p.code)).toEqual(["not-a-task-history"]);
    }
  });

  it("a directory where the file belongs is history-unreadable", async () => {
    mkdirSync(join(root, HISTORY_FILE));
    const problems: Problem[] = [];
    expect((await new HistoryCache().read(root, problems)).size).toBe(0);
    expect(problems.map((p) => p.code)).toEqual(["history-unreadable"]);
  });
});
