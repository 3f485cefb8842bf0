/**
 * Case 2 (cold backfill of a large history) and case 6 (one 1 GB document): a full collection
 * (runPass into a fresh ledger) in a child process, for its wall time and peak RSS, against a
 * child that only reads the same documents raw. Each is measured with the corpus in the page
 * cache ("warm": the parser against memory bandwidth) and evicted from it ("cold": against the
 * disk), interleaved per round.
 */
import { mkdirSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { type ChildResult, runChild } from "../lib/child.ts";
import { type Corpus, writeCorpus } from "../lib/corpus.ts";
import { canEvict, evict } from "../lib/page-cache.ts";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, MiB, median } from "../lib/stats.ts";

export interface CollectVsRaw {
  readonly warm: { readonly pass: ChildResult[]; readonly raw: ChildResult[] };
  readonly cold?: { readonly pass: ChildResult[]; readonly raw: ChildResult[] };
}

/** Free bytes where `dir` lives. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

export function requireDisk(dir: string, bytes: number, what: string): void {
  const free = freeBytes(dir);
  if (free < bytes * 1.2 + 512 * MiB) {
    throw new Error(
      `${what} needs ~${fmt(bytes / MiB / 1024, 1)} GB in ${dir}, only ${fmt(free / MiB / 1024, 1)} GB free`,
    );
  }
}

/** Rounds of [pass, raw] (warm) and, when possible, [evict, pass, evict, raw] (cold), rotated. */
export function collectVsRaw(corpus: Corpus, work: string, reps: number, cold: boolean): CollectVsRaw {
  const files = corpus.docs.map((d) => d.spec.path);
  const warm = { pass: [] as ChildResult[], raw: [] as ChildResult[] };
  const coldRes = { pass: [] as ChildResult[], raw: [] as ChildResult[] };
  let stateN = 0;
  const pass = (): ChildResult => {
    const stateDir = join(work, `state-${stateN++}`);
    try {
      const r = runChild({ mode: "pass", clineDir: corpus.tree.clineDir, stateDir });
      if (r.events !== corpus.events || r.calls !== corpus.toolUses || r.failed !== 0) {
        throw new Error(
          `collection found ${r.events}/${corpus.events} events, ${r.calls}/${corpus.toolUses} calls, ${r.failed} failed`,
        );
      }
      return r;
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  };
  const raw = (): ChildResult => runChild({ mode: "raw", sessionsDir: corpus.tree.sessionsDir });
  const steps: (() => void)[] = [() => warm.pass.push(pass()), () => warm.raw.push(raw())];
  if (cold) {
    steps.push(
      () => {
        evict(files, work);
        coldRes.pass.push(pass());
      },
      () => {
        evict(files, work);
        coldRes.raw.push(raw());
      },
    );
  }
  raw(); // warms the page cache (and the disk's own) for the first warm round
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < steps.length; i++) (steps[(i + r) % steps.length] as () => void)();
  }
  return cold ? { warm, cold: coldRes } : { warm };
}

const ms = (xs: readonly ChildResult[]): number => median(xs.map((x) => x.ms));
const peakMB = (xs: readonly ChildResult[]): number => Math.max(...xs.map((x) => x.maxRssKB)) / 1024;

/** Warm and cold rows; `maxRatio` undefined = informational (no target). */
function ratioRows(name: string, label: string, m: CollectVsRaw, maxRatio?: number): Row[] {
  const rows: Row[] = [];
  for (const [which, r] of [
    ["warm", m.warm],
    ["cold", m.cold],
  ] as const) {
    if (r === undefined) continue;
    const p = ms(r.pass);
    const raw = ms(r.raw);
    rows.push({
      case: name,
      measure: `${label}, ${which} cache`,
      value: `${fmt(p / 1000, 2)} s`,
      baseline: `${fmt(raw / 1000, 2)} s raw read`,
      ratio: p / raw,
      ratioOf: "collect / raw",
      ...(maxRatio === undefined ? {} : atMost(p / raw, maxRatio)),
    });
  }
  return rows;
}

export interface BackfillOptions {
  readonly tmp: string;
  readonly sessions: number;
  readonly totalBytes: number;
  readonly reps: number;
}

export async function backfillCase(opts: BackfillOptions): Promise<CaseResult> {
  const work = join(opts.tmp, "backfill");
  mkdirSync(work, { recursive: true });
  try {
    requireDisk(opts.tmp, opts.totalBytes, "backfill corpus");
    const corpus = writeCorpus(join(work, "home"), {
      sessions: opts.sessions,
      totalBytes: opts.totalBytes,
      seed: 2,
    });
    const cold = canEvict();
    const m = collectVsRaw(corpus, work, opts.reps, cold);
    const all = [...m.warm.pass, ...(m.cold?.pass ?? [])];
    const events = corpus.events;
    const evps = (x: number): string => `${fmt(events / (x / 1000), 0)} events/s`;
    const peak = peakMB(all);
    const rows: Row[] = [
      ...ratioRows(
        "backfill",
        `collect ${opts.sessions} sessions, ${fmt(corpus.bytes / MiB / 1024, 2)} GB`,
        m,
        2,
      ),
      {
        case: "backfill",
        measure: "  peak RSS of the collecting process",
        value: `${fmt(peak)} MB`,
        baseline: `${fmt(Math.max(...all.map((x) => x.startRssKB)) / 1024)} MB at start`,
        ...{ target: "<= 200 MB", ok: peak <= 200 },
      },
    ];
    const notes = [
      `backfill: ${corpus.docs.length} documents (${corpus.rootIds.length} sessions + sub-agents), ` +
        `${events} events, ${corpus.toolUses} tool calls, generated in ${fmt(corpus.generateMs / 1000)} s; ` +
        `throughput warm ${evps(ms(m.warm.pass))}` +
        (m.cold ? `, cold ${evps(ms(m.cold.pass))}` : "") +
        `; runs (s) warm collect ${m.warm.pass.map((x) => fmt(x.ms / 1000, 2)).join(" ")}, raw ${m.warm.raw.map((x) => fmt(x.ms / 1000, 2)).join(" ")}` +
        (m.cold
          ? `; cold collect ${m.cold.pass.map((x) => fmt(x.ms / 1000, 2)).join(" ")}, raw ${m.cold.raw.map((x) => fmt(x.ms / 1000, 2)).join(" ")}`
          : "; cold runs skipped (no GNU dd with iflag=nocache)"),
    ];
    return {
      name: "backfill",
      rows,
      notes,
      data: {
        sessions: opts.sessions,
        documents: corpus.docs.length,
        bytes: corpus.bytes,
        events,
        toolCalls: corpus.toolUses,
        generateMs: corpus.generateMs,
        ...m,
      },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface HugeOptions {
  readonly tmp: string;
  readonly bytes: number;
  readonly reps: number;
}

/** Case 6: one document of ~1 GB (bigger tool results: whole files and logs). */
export async function hugeCase(opts: HugeOptions): Promise<CaseResult> {
  const work = join(opts.tmp, "huge");
  mkdirSync(work, { recursive: true });
  try {
    requireDisk(opts.tmp, opts.bytes, "1 GB document");
    const corpus = writeCorpus(join(work, "home"), {
      sessions: 1,
      totalBytes: opts.bytes,
      subagentShare: 0,
      unindexedShare: 0,
      maxDocShare: 1,
      toolResultMedian: 12_000,
      seed: 6,
    });
    const m = collectVsRaw(corpus, work, opts.reps, canEvict());
    const all = [...m.warm.pass, ...(m.cold?.pass ?? [])];
    const peak = peakMB(all);
    const mb = corpus.bytes / MiB;
    return {
      name: "huge",
      rows: [
        {
          case: "huge",
          measure: `peak RSS collecting one ${fmt(mb, 0)} MB document`,
          value: `${fmt(peak)} MB`,
          baseline: `${fmt(Math.max(...all.map((x) => x.startRssKB)) / 1024)} MB at start`,
          target: "<= 200 MB",
          ok: peak <= 200,
        },
        ...ratioRows("huge", "  collect time", m),
      ],
      notes: [
        `huge: ${corpus.events} events, ${corpus.toolUses} tool calls in one document; collect ` +
          `${fmt(mb / (ms(m.warm.pass) / 1000), 0)} MB/s warm` +
          (m.cold ? `, ${fmt(mb / (ms(m.cold.pass) / 1000), 0)} MB/s cold` : ""),
      ],
      data: { bytes: corpus.bytes, events: corpus.events, toolCalls: corpus.toolUses, ...m },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
