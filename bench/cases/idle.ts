/**
 * Case 3: the idle pass. After a full collection, a pass over a history where nothing changed
 * must cost about what noticing that costs (statWalk: readdir + stat of each document), and a
 * pass where one document changed must add only that document's read. Measured in this
 * process, interleaved, on a warm ledger and adapter (as in the daemon).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { checkpointOf, statFile } from "../../src/adapter/fingerprint.ts";
import type { Adapter } from "../../src/adapter/types.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { appendToDocument, type Corpus } from "../lib/corpus.ts";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, median } from "../lib/stats.ts";
import { statWalk } from "../lib/walk.ts";

export interface IdleMeasurement {
  readonly documents: number;
  readonly fillMs: number;
  readonly idlePass: number[];
  readonly discoverOnly: number[];
  readonly statWalk: number[];
  readonly oneChanged: number[];
  readonly oneChangedBytes: number[];
}

/**
 * Records every discovered document as collected (its checkpoint, no events), without reading
 * it: the state an idle pass starts from, in a fraction of a full collection's time.
 */
export async function seedCheckpoints(adapter: Adapter, ledger: Ledger): Promise<number> {
  const { sources } = await adapter.discover();
  for (const source of sources) {
    const stat = statFile(source.path);
    ledger.commit({
      status: "read",
      source,
      checkpoint: checkpointOf(source.path, stat),
      events: [],
      toolCalls: [],
      problems: [],
    });
  }
  return sources.length;
}

export interface IdleOptions {
  readonly reps: number;
  /** Passes with one changed document (default: reps). */
  readonly changedReps?: number;
  /** "collect": a full runPass first (checked against the corpus); "checkpoints": seedCheckpoints. */
  readonly fill?: "collect" | "checkpoints";
}

/** Fills a fresh ledger from `corpus`, then times idle passes, discovery and the stat walk. */
export async function measureIdle(corpus: Corpus, tmp: string, opts: IdleOptions): Promise<IdleMeasurement> {
  const { reps } = opts;
  const changedReps = opts.changedReps ?? reps;
  const stateDir = mkdtempSync(join(tmp, "idle-state-"));
  const ledger = Ledger.open(stateDir);
  try {
    const c = corpus.tree.clineDir;
    const adapter = createClineAdapter(resolveClinePaths({ clineDir: c }, {}, c, c));
    const t0 = performance.now();
    if (opts.fill === "checkpoints") {
      await seedCheckpoints(adapter, ledger);
    } else {
      const fill = await runPass(adapter, ledger);
      if (fill.eventsAdded !== corpus.events || fill.failed !== 0) {
        throw new Error(`idle fill: ${fill.eventsAdded}/${corpus.events} events, ${fill.failed} failed`);
      }
    }
    const fillMs = performance.now() - t0;
    const s = await interleave(
      {
        idlePass: async () => {
          const r = await runPass(adapter, ledger);
          if (r.read !== 0 || r.unchanged !== corpus.docs.length) {
            throw new Error(`idle pass read ${r.read}, unchanged ${r.unchanged}/${corpus.docs.length}`);
          }
        },
        discoverOnly: () => adapter.discover(),
        statWalk: () => {
          const n = statWalk(corpus.tree.sessionsDir);
          if (n !== corpus.docs.length) throw new Error(`stat walk saw ${n}/${corpus.docs.length} documents`);
        },
      },
      { reps, warmup: 1 },
    );
    const oneChanged: number[] = [];
    const oneChangedBytes: number[] = [];
    for (let i = 0; i < changedReps; i++) {
      const next = appendToDocument(corpus, (i * 7919 + 13) % corpus.docs.length, 1);
      const t = performance.now();
      const r = await runPass(adapter, ledger);
      oneChanged.push(performance.now() - t);
      oneChangedBytes.push(next.stats.bytes);
      if (r.read !== 1 || (opts.fill !== "checkpoints" && r.eventsAdded !== 1)) {
        throw new Error(`one-changed pass read ${r.read} documents, added ${r.eventsAdded} events`);
      }
    }
    return {
      documents: corpus.docs.length,
      fillMs,
      idlePass: s.idlePass,
      discoverOnly: s.discoverOnly,
      statWalk: s.statWalk,
      oneChanged,
      oneChangedBytes,
    };
  } finally {
    ledger.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function idleCase(corpus: Corpus, tmp: string, reps: number): Promise<CaseResult> {
  const m = await measureIdle(corpus, tmp, { reps });
  const idle = median(m.idlePass);
  const walk = median(m.statWalk);
  const disc = median(m.discoverOnly);
  const changed = median(m.oneChanged);
  const n = corpus.rootIds.length;
  const rows: Row[] = [
    {
      case: "idle",
      measure: `idle pass, ${n} sessions (${m.documents} documents)`,
      value: `${fmt(idle, 0)} ms`,
      baseline: `${fmt(walk, 0)} ms stat walk`,
      ratio: idle / walk,
      ratioOf: "pass / stat walk",
      ...atMost(idle / walk, 2),
    },
    {
      case: "idle",
      measure: "  of which discovery",
      value: `${fmt(disc, 0)} ms`,
      baseline: `${fmt(walk, 0)} ms stat walk`,
      ratio: disc / walk,
      ratioOf: "discover / stat walk",
    },
    {
      case: "idle",
      measure: `pass with 1 of ${m.documents} documents changed`,
      value: `${fmt(changed, 0)} ms`,
      baseline: `${fmt(idle, 0)} ms idle pass`,
      ratio: changed / idle,
      ratioOf: "pass / idle pass",
    },
  ];
  return {
    name: "idle",
    rows,
    notes: [
      `idle: full collection of the ${m.documents} documents took ${fmt(m.fillMs / 1000, 2)} s; runs (ms) ` +
        `idle ${m.idlePass.map((x) => fmt(x, 0)).join(" ")}, discover ${m.discoverOnly.map((x) => fmt(x, 0)).join(" ")}, ` +
        `stat walk ${m.statWalk.map((x) => fmt(x, 0)).join(" ")}, one changed ${m.oneChanged.map((x) => fmt(x, 0)).join(" ")} ` +
        `(documents of ${m.oneChangedBytes.map((b) => fmt(b / 1024, 0)).join(", ")} KB)`,
    ],
    data: m,
  };
}
