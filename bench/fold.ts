/**
 * Fold benchmark: `npx tsx bench/fold.ts [sessions ...]` (default 2000 10000; also `npm run bench
 * -- fold`). The cumulative export of series that collapse (session.id off: the team setting OTEL_METRICS_INCLUDE_SESSION_ID=false), read
 * the old way (every series row of the ledger into memory, folded in JS: what the producer did
 * before the fold moved into SQL) and the new way (src/ledger/fold.ts: groups summed in SQL, read
 * in pages of 1,000 points, src/export/pages.ts), on synthetic ledgers of each size. Each (size,
 * way) runs in a child process of its own, so its heap peak and RSS peak are its own. Prints the
 * heap peaks, times and their ratios, measured in this one run.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { foldKeyOf } from "../src/export/fold-key.ts";
import { liveGenai, translateGenai } from "../src/export/genai/metrics.ts";
import { toMetricData } from "../src/export/metric-data.ts";
import { CumulativePages } from "../src/export/pages.ts";
import { buildPriceLookup } from "../src/export/price-lookup.ts";
import { liveSeries, type TranslateOptions, translate } from "../src/export/translate.ts";
import { LEDGER_FILE, Ledger } from "../src/ledger/ledger.ts";
import { fillLedger } from "../test/export/helpers/ledger.ts";

const CHILD_FLAG = "--fold-bench-child";
const TTL = 7 * 86_400_000;
const PAGE_POINTS = 1000;

type Way = "old" | "paged";

export interface FoldRun {
  readonly sessions: number;
  readonly way: Way;
  /** Ledger series rows (usage + tool + outcome + genai rows). */
  readonly rows: number;
  /** Exported points of the usage, tool and outcome metrics and GenAI series. */
  readonly points: number;
  readonly pages: number;
  readonly ms: number;
  /** Reachable heap at its highest sample (after each page, or after the whole read), above the start. */
  readonly heapPeakMB: number;
  readonly maxRssMB: number;
}

/** Heap held now, in MB: what is still reachable (a full GC first; needs --expose-gc). */
function heapMB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function child(sessions: number, way: Way, dir: string): FoldRun {
  // Counted straight from the file: reading the rows here would inflate this child's RSS peak.
  const raw = new Database(join(dir, LEDGER_FILE), { readonly: true });
  const rows = (
    raw
      .prepare(
        `SELECT (SELECT COUNT(*) FROM usage_series) + (SELECT COUNT(*) FROM tool_series) +
           (SELECT COUNT(*) FROM tool_outcome_series) + (SELECT COUNT(*) FROM genai_rows) AS n`,
      )
      .get() as { n: number }
  ).n;
  raw.close();
  const ledger = Ledger.open(dir);
  const opts: TranslateOptions = {
    project: "path",
    includeSessionId: false,
    priceOf: buildPriceLookup(undefined),
  };
  const now = Date.now();
  const filter = { eventSinceMs: now - TTL, updatedSinceMs: 0 };
  const start = heapMB();
  let peak = start;
  let points = 0;
  let pages = 0;
  const t = performance.now();
  if (way === "old") {
    // The path this replaces: every row read, folded by attributes in JS, the TTL in JS.
    const usage = ledger.usageSeries();
    const tools = ledger.toolSeries();
    const outcomes = ledger.signals?.toolOutcomes.series() ?? [];
    const genaiRows = ledger.signals?.genaiSeries() ?? [];
    const translated = translate(usage, tools, opts, outcomes);
    for (const [id, s] of translated) translated.set(id, liveSeries(s, now, TTL, 0));
    const genai = liveGenai(translateGenai(genaiRows, opts), now, TTL, 0);
    const data = toMetricData(translated, "cumulative", 0n, BigInt(now) * 1_000_000n);
    peak = Math.max(peak, heapMB());
    // The rows stay reachable until here, as they did in the producer's collection.
    points =
      data.reduce((x, m) => x + m.dataPoints.length, 0) +
      genai.length +
      0 * (usage.length + tools.length + outcomes.length + genaiRows.length);
    pages = 1;
  } else {
    const fold = foldKeyOf(opts);
    const p = new CumulativePages(ledger, {
      filter,
      translate: opts,
      temporality: "cumulative",
      startNs: 0n,
      endNs: BigInt(now) * 1_000_000n,
      maxPoints: PAGE_POINTS,
      fold,
    });
    for (let page = p.next(); page !== undefined; page = p.next()) {
      points += page.reduce((x, m) => x + m.dataPoints.length, 0);
      pages++;
      peak = Math.max(peak, heapMB());
    }
  }
  const ms = performance.now() - t;
  ledger.close();
  return {
    sessions,
    way,
    rows,
    points,
    pages,
    ms,
    heapPeakMB: peak - start,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

export function benchFold(sizes: readonly number[]): FoldRun[] {
  const out: FoldRun[] = [];
  for (const sessions of sizes) {
    const dir = mkdtempSync(join(tmpdir(), "fold-bench-"));
    try {
      const l = Ledger.open(dir);
      fillLedger(l, { sessions });
      l.close();
      for (const way of ["old", "paged"] as const) {
        const r = spawnSync(
          process.execPath,
          [
            "--expose-gc",
            "--import",
            "tsx",
            fileURLToPath(import.meta.url),
            CHILD_FLAG,
            String(sessions),
            way,
            dir,
          ],
          { encoding: "utf8", maxBuffer: 1 << 20 },
        );
        if (r.status !== 0) throw new Error(`fold bench child failed: ${r.stderr}`);
        out.push(JSON.parse(r.stdout.trim().split("\n").pop() as string) as FoldRun);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

const f = (n: number, d = 1): string => n.toFixed(d);

export function foldReport(runs: readonly FoldRun[]): string[] {
  const lines: string[] = [];
  const of = (s: number, w: Way) => runs.find((r) => r.sessions === s && r.way === w);
  const sizes = [...new Set(runs.map((r) => r.sessions))];
  for (const s of sizes) {
    const o = of(s, "old");
    const p = of(s, "paged");
    if (!o || !p) continue;
    lines.push(
      `${s} sessions, ${o.rows} series rows, ${o.points} points: old fold heap +${f(o.heapPeakMB, 2)} MB ${f(o.ms, 0)} ms (RSS peak ${f(o.maxRssMB, 0)} MB); ` +
        `paged fold heap +${f(p.heapPeakMB, 2)} MB ${f(p.ms, 0)} ms (RSS peak ${f(p.maxRssMB, 0)} MB, ${p.pages} pages, ${p.points} points); ` +
        `heap old/paged ${f(o.heapPeakMB / Math.max(p.heapPeakMB, 0.01), 0)}x, time paged/old ${f(p.ms / o.ms, 2)}x`,
    );
  }
  const [a, b] = [sizes[0], sizes[sizes.length - 1]];
  if (a !== undefined && b !== undefined && a !== b) {
    for (const w of ["old", "paged"] as const) {
      const x = of(a, w);
      const y = of(b, w);
      if (x && y)
        lines.push(
          `${w} fold, ${b} vs ${a} sessions: heap peak ${f(y.heapPeakMB, 2)} vs ${f(x.heapPeakMB, 2)} MB (${f(y.heapPeakMB / Math.max(x.heapPeakMB, 0.01), 2)}x), RSS peak ${f(y.maxRssMB / x.maxRssMB, 2)}x, time ${f(y.ms / x.ms, 2)}x`,
        );
    }
  }
  return lines;
}

if (process.argv[2] === CHILD_FLAG) {
  const [, , , sessions, way, dir] = process.argv;
  process.stdout.write(`${JSON.stringify(child(Number(sessions), way as Way, dir as string))}\n`);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number);
  for (const line of foldReport(benchFold(sizes.length > 0 ? sizes : [2000, 10000])))
    process.stdout.write(`${line}\n`);
}
