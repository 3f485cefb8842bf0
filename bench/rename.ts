/**
 * The cost of the daemon's pass after one whole-file rewrite of a task's ui_messages.json (temp
 * file + rename, 2-4 times per request in the legacy core): `npx tsx bench/rename.ts [--reps N]
 * [--tasks 1000,10000]` (not part of npm test).
 *
 * For each N known tasks (checkpoints in the ledger, every folder watched), in one run, rounds
 * alternating between
 *   before: the plans with `renamesRediscover` (every rename asks for a full discovery of both
 *           adapters: what every rename did before), and
 *   after:  the plans as the adapters give them (a rename onto a known source re-reads only it),
 * plus "after + history": the rename followed by the rewrite of `state/taskHistory.json` that the
 * legacy core makes with it (an index, which every listed task already has its entry in: no
 * discovery either, WatchPlan.needsIndex). Prints medians and ratios of one run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ledger } from "../src/ledger/ledger.ts";
import { fmt, median } from "./lib/stats.ts";
import { seedTaskCheckpoints, writeTaskCorpus } from "./lib/task-corpus.ts";
import { daemonSurfaces, type RenameTrial, startWatchedLoop, timedRename } from "./lib/task-loop.ts";

const argOf = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const REPS = Number(argOf("--reps", "3"));
const PER_ROUND = 5;
const SIZES = argOf("--tasks", "1000,10000").split(",").map(Number);
const REQUESTS = 2;

type Variant = "before" | "after" | "after + history";
const VARIANTS: readonly Variant[] = ["before", "after", "after + history"];

async function measure(n: number, work: string): Promise<Record<Variant, RenameTrial[]>> {
  const corpus = writeTaskCorpus(join(work, `home-${n}`), n, REQUESTS);
  const ledger = Ledger.open(join(work, `state-${n}`));
  const out: Record<Variant, RenameTrial[]> = { before: [], after: [], "after + history": [] };
  try {
    const { adapter, discovers } = daemonSurfaces(corpus);
    await seedTaskCheckpoints(adapter, ledger);
    const plans = adapter.watchPlans ?? [];
    let requests = REQUESTS;
    for (let r = 0; r < REPS; r++) {
      for (let i = 0; i < VARIANTS.length; i++) {
        const v = VARIANTS[(i + r) % VARIANTS.length] as Variant;
        const w = await startWatchedLoop(
          adapter,
          ledger,
          v === "before" ? plans.map((p) => ({ ...p, renamesRediscover: true })) : plans,
        );
        try {
          for (let k = 0; k < PER_ROUND; k++) {
            const t = (r * 7919 + i * 131 + k * 17) % n;
            const trial = await timedRename(
              w,
              corpus,
              discovers,
              t,
              ++requests,
              v === "after + history" ? n : undefined,
            );
            if (trial.discovered !== (v === "before")) throw new Error(`${v}: discovery ${trial.discovered}`);
            out[v].push(trial);
          }
        } finally {
          await w.stop();
        }
      }
    }
    return out;
  } finally {
    ledger.close();
  }
}

const work = mkdtempSync(join(tmpdir(), "cline-otel-bench-rename-"));
try {
  const lines = [
    `pass after one rename onto a known task's ui_messages.json (${REPS} rounds x ${PER_ROUND} renames per variant, medians)`,
    "tasks   before (full discovery)   after (that source only)   before / after   after + history rewrite   latency before / after",
  ];
  for (const n of SIZES) {
    const m = await measure(n, work);
    const pass = (v: Variant) => median(m[v].map((x) => x.passMs));
    const lat = (v: Variant) => median(m[v].map((x) => x.latencyMs));
    lines.push(
      `${String(n).padEnd(7)} ${`${fmt(pass("before"), 1)} ms`.padEnd(25)} ${`${fmt(pass("after"), 1)} ms`.padEnd(26)} ` +
        `${fmt(pass("before") / pass("after"), 1)}x`.padEnd(16) +
        ` ${`${fmt(pass("after + history"), 1)} ms`.padEnd(25)} ${fmt(lat("before"), 0)} / ${fmt(lat("after"), 0)} ms`,
    );
    lines.push(
      `        runs (ms): before ${m.before.map((x) => fmt(x.passMs, 0)).join(" ")}; after ${m.after.map((x) => fmt(x.passMs, 1)).join(" ")}; ` +
        `after + history ${m["after + history"].map((x) => fmt(x.passMs, 0)).join(" ")}`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
