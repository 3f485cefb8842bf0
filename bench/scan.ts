/**
 * Scanner benchmark: `npx tsx bench/scan.ts` (not part of npm test).
 *
 * Case 1, a ~70 MB realistic messages document, 5 timed runs per case (medians):
 *   scanner (scanFile)  vs  readFileSync + JSON.parse  vs  raw readFileSync.
 * Targets: JSON.parse / scanner >= 3, raw / scanner >= 0.5.
 * Case 2, a ~1 GB document scanned in a dedicated child process: throughput and peak RSS
 * (`process.resourceUsage().maxRSS`). Target: peak RSS well under 200 MB.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { scanFile } from "../src/scan/scanner.ts";
import { isWrongType } from "../src/scan/schema.ts";
import { type ExpectedDoc, messagesSchema, writeMessagesDoc } from "./lib/messages-doc.ts";

export interface ScanBenchOptions {
  /** Approximate document size in MB (default 70). */
  readonly sizeMB?: number;
  /** Runs per case (default 5). */
  readonly reps?: number;
  readonly chunkBytes?: number;
}

export interface ScanBenchResult {
  readonly bytes: number;
  readonly reps: number;
  readonly scannerMs: number;
  readonly parseMs: number;
  readonly rawMs: number;
  /** JSON.parse time / scanner time (target >= 3). */
  readonly parseOverScanner: number;
  /** raw readFileSync time / scanner time (target >= 0.5). */
  readonly rawOverScanner: number;
  readonly scannerMBps: number;
  /** Every timed run, in ms (the machine may be shared: look at the spread). */
  readonly samples: { readonly scanner: number[]; readonly parse: number[]; readonly raw: number[] };
}

export interface HugeScanBenchOptions {
  /** Approximate document size in MB (default 1024). */
  readonly sizeMB?: number;
  readonly chunkBytes?: number;
}

export interface HugeScanBenchResult {
  readonly bytes: number;
  readonly scanMs: number;
  readonly scannerMBps: number;
  /** Peak RSS of the child that only scanned, in MB. */
  readonly maxRssMB: number;
  /** Its RSS before the scan (runtime + loader), in MB. */
  readonly startRssMB: number;
  readonly assistantMessagesFound: number;
}

const MB = 1024 * 1024;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Counts assistant messages whose metrics came back complete, and checks them against the generator. */
function checkMetrics(value: unknown, expected: ExpectedDoc): number {
  if (isWrongType(value)) throw new Error("benchmark document did not scan as an object");
  const messages = (value as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) throw new Error("benchmark document has no messages array");
  let found = 0;
  expected.messages.forEach((em, idx) => {
    if (em.metrics === undefined) return;
    const got = (messages[idx] as { metrics?: Record<string, unknown> } | undefined)?.metrics;
    for (const k of ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"] as const) {
      if (got?.[k] !== em.metrics[k])
        throw new Error(`message ${idx}: ${k} ${String(got?.[k])} != ${em.metrics[k]}`);
    }
    found++;
  });
  return found;
}

/** A full GC between cases, so none pays for another's garbage. */
const fullGc: () => void = (() => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

/**
 * Untimed runs first: V8 needs about three 70 MB scans to finish optimizing the scanner's
 * hot loop. The full GC comes before them, not after: a GC that frees every scanner object
 * lets V8 drop their hidden classes and deoptimize the code built on them ("weak objects"),
 * which would put a re-warm-up into the first timed run.
 */
const WARMUP_RUNS = 3;

async function timeReps(reps: number, run: () => unknown): Promise<number[]> {
  fullGc();
  for (let w = 0; w < WARMUP_RUNS; w++) await run();
  const out: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    await run();
    out.push(performance.now() - t);
  }
  return out;
}

function turnsFor(sizeMB: number, avgTurnBytes: number): number {
  return Math.max(1, Math.round((sizeMB * MB) / avgTurnBytes));
}

/** Case 1: scanner vs JSON.parse vs raw read on a ~70 MB document. */
export async function benchScan(opts: ScanBenchOptions = {}): Promise<ScanBenchResult> {
  const reps = opts.reps ?? 5;
  const dir = mkdtempSync(join(tmpdir(), "cline-otel-bench-scan-"));
  try {
    const path = join(dir, "doc.messages.json");
    // Mostly 15 KB tool results (file reads, command output), every 50th a 600 KB one.
    const { bytes, expected } = writeMessagesDoc(path, {
      turns: turnsFor(opts.sizeMB ?? 70, 31_000),
      toolResultChars: (t) => (t % 50 === 0 ? 600_000 : 15_000),
      seed: 7,
    });
    const scanOpts = opts.chunkBytes === undefined ? {} : { chunkBytes: opts.chunkBytes };
    checkMetrics((await scanFile(path, messagesSchema, scanOpts)).value, expected);

    // Each case runs its warm-up and reps back to back, after a full GC: interleaving them
    // would bill the scanner for collecting JSON.parse's 70 MB of garbage.
    const scanner = await timeReps(reps, () => scanFile(path, messagesSchema, scanOpts));
    const parse = await timeReps(reps, () => JSON.parse(readFileSync(path, "utf8")));
    const raw = await timeReps(reps, () => readFileSync(path));
    const scannerMs = median(scanner);
    const parseMs = median(parse);
    const rawMs = median(raw);
    return {
      bytes,
      reps,
      scannerMs,
      parseMs,
      rawMs,
      parseOverScanner: parseMs / scannerMs,
      rawOverScanner: rawMs / scannerMs,
      scannerMBps: bytes / MB / (scannerMs / 1000),
      samples: { scanner, parse, raw },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CHILD_FLAG = "--scan-child";

/** Runs in the dedicated child: scan one file, report time and RSS as one JSON line. */
async function childMain(path: string, chunkBytes: number | undefined): Promise<void> {
  const startRss = process.resourceUsage().maxRSS;
  const t = performance.now();
  const res = await scanFile(path, messagesSchema, chunkBytes === undefined ? {} : { chunkBytes });
  const scanMs = performance.now() - t;
  const value = res.value as { messages?: { metrics?: unknown }[] };
  const assistantMessagesFound = (value.messages ?? []).filter((m) => m.metrics !== undefined).length;
  const maxRss = process.resourceUsage().maxRSS; // kilobytes on Linux
  process.stdout.write(
    `${JSON.stringify({ scanMs, bytesRead: res.bytesRead, startRssKB: startRss, maxRssKB: maxRss, assistantMessagesFound })}\n`,
  );
}

/** Case 2: a ~1 GB document scanned by a child process whose peak RSS is the scanner's. */
export async function benchScanHuge(opts: HugeScanBenchOptions = {}): Promise<HugeScanBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "cline-otel-bench-huge-"));
  try {
    const path = join(dir, "huge.messages.json");
    // Few turns, each with a ~10 MB tool result: the shape that breaks JSON.parse.
    const { bytes, expected } = writeMessagesDoc(path, {
      turns: turnsFor(opts.sizeMB ?? 1024, 10_000_000),
      toolResultChars: () => 10_000_000,
      seed: 11,
    });
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const args = ["--import", tsx, fileURLToPath(import.meta.url), CHILD_FLAG, path];
    if (opts.chunkBytes !== undefined) args.push(String(opts.chunkBytes));
    const child = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 1 << 20 });
    if (child.status !== 0) throw new Error(`scan child failed (${child.status}): ${child.stderr}`);
    const r = JSON.parse(child.stdout.trim().split("\n").pop() ?? "") as {
      scanMs: number;
      bytesRead: number;
      startRssKB: number;
      maxRssKB: number;
      assistantMessagesFound: number;
    };
    const wanted = expected.messages.filter((m) => m.metrics !== undefined).length;
    if (r.bytesRead !== bytes || r.assistantMessagesFound !== wanted) {
      throw new Error(
        `huge scan mismatch: read ${r.bytesRead}/${bytes}, found ${r.assistantMessagesFound}/${wanted}`,
      );
    }
    return {
      bytes,
      scanMs: r.scanMs,
      scannerMBps: bytes / MB / (r.scanMs / 1000),
      maxRssMB: r.maxRssKB / 1024,
      startRssMB: r.startRssKB / 1024,
      assistantMessagesFound: r.assistantMessagesFound,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  const a = await benchScan();
  const mb = a.bytes / MB;
  const rows: [string, number, number[]][] = [
    ["scanner (scanFile)", a.scannerMs, a.samples.scanner],
    ["readFileSync + JSON.parse", a.parseMs, a.samples.parse],
    ["readFileSync (raw)", a.rawMs, a.samples.raw],
  ];
  console.log(
    `document: ${fmt(mb)} MB, ${a.reps} timed runs per case after ${WARMUP_RUNS} warm-up runs, medians`,
  );
  console.log(`${"case".padEnd(28)}${"median ms".padStart(12)}${"MB/s".padStart(8)}   all runs (ms)`);
  for (const [name, ms, all] of rows) {
    console.log(
      `${name.padEnd(28)}${fmt(ms).padStart(12)}${fmt(mb / (ms / 1000), 0).padStart(8)}   ${all.map((x) => fmt(x, 0)).join(" ")}`,
    );
  }
  console.log(
    `ratios: JSON.parse/scanner = ${fmt(a.parseOverScanner, 2)} (target >= 3), ` +
      `raw/scanner = ${fmt(a.rawOverScanner, 2)} (target >= 0.5)`,
  );
  const h = await benchScanHuge();
  console.log(
    `huge: ${fmt(h.bytes / MB, 0)} MB scanned in ${fmt(h.scanMs, 0)} ms = ${fmt(h.scannerMBps, 0)} MB/s, ` +
      `peak RSS ${fmt(h.maxRssMB)} MB (runtime before scan ${fmt(h.startRssMB)} MB; target well under 200 MB)`,
  );
}

if (process.argv[2] === CHILD_FLAG) {
  const chunk = process.argv[4];
  await childMain(process.argv[3] as string, chunk === undefined ? undefined : Number(chunk));
} else if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
