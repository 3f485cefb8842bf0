/**
 * The folded series reads (src/ledger/usage/fold.ts): their query plans (one pass over the one series
 * table, the grouping in a temporary B-tree, nothing joined or looked up per row), and keyset
 * pages that give every group once, whole, in key order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { FOLD_TABLES, type FoldKey, foldSql } from "../../src/ledger/usage/fold.ts";
import { fillLedger } from "../export/helpers/ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fold-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const KEYS: readonly [string, FoldKey, string | undefined][] = [
  ["session_id dropped", { drop: ["session_id"] }, undefined],
  ["session_id and project dropped", { drop: ["session_id", "project"] }, undefined],
  ["project rendered", { drop: ["session_id"], render: { column: "project", fn: (v) => v } }, "fold_key_1"],
];

describe("folded reads", () => {
  it("each page is one scan of its series table, grouped in a temporary B-tree: nothing else is read", () => {
    Ledger.open(dir).close();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    db.function("fold_key_1", { deterministic: true }, (v: unknown) => String(v));
    try {
      for (const [what, key, fn] of KEYS) {
        for (const [name, spec] of Object.entries(FOLD_TABLES)) {
          for (const after of [false, true]) {
            const sql = foldSql(spec, key, spec.key.includes("project") ? fn : undefined, after);
            const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1], 0]));
            const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
              (r) => r.detail,
            );
            const label = `${what}, ${name}${after ? ", after a key" : ""}: ${plan.join(" | ")}`;
            expect(
              plan.filter((p) => /^(SCAN|SEARCH) /.test(p)),
              label,
            ).toEqual([`SCAN ${spec.table}`]);
            expect(plan, label).toContain("USE TEMP B-TREE FOR GROUP BY");
            expect(plan.join(" "), label).not.toMatch(/CORRELATED|SUBQUERY|AUTOMATIC/);
          }
        }
      }
    } finally {
      db.close();
    }
  });

  it("keyset pages give every group once, whole, in key order, however small the page", () => {
    const l = Ledger.open(dir);
    fillLedger(l, { sessions: 30 });
    const key: FoldKey = { drop: ["session_id"] };
    const f = { eventSinceMs: Number.NEGATIVE_INFINITY, updatedSinceMs: Number.NEGATIVE_INFINITY };
    const whole = [...l.folds.tool(f, key, { after: undefined, limit: -1 })];
    expect(whole.length).toBeGreaterThan(5);
    expect(whole.length).toBeLessThan(l.toolSeries().length);
    expect(l.folds.count(f, key)).toBe(
      whole.length + [...l.folds.usage(f, key, { after: undefined, limit: -1 })].length,
    );
    for (const limit of [1, 2, 7]) {
      const paged: typeof whole = [];
      let after: (typeof whole)[number]["key"] | undefined;
      for (;;) {
        const page = [...l.folds.tool(f, key, { after, limit })];
        paged.push(...page);
        if (page.length < limit) break;
        after = page[page.length - 1]?.key;
      }
      expect(paged, `limit ${limit}`).toEqual(whole);
    }
    // The totals are the rows' sums.
    const calls = (rows: readonly { calls: number }[]) => rows.reduce((x, r) => x + r.calls, 0);
    expect(calls(whole)).toBe(calls(l.toolSeries()));
    l.close();
  });
});
