/**
 * The daemon's collection loop over a task corpus, in this process (bench/rename.ts,
 * bench/tasks.ts): both adapters combined as `run` combines them, watched by their plans, the
 * sweep out of the way, and a timed whole-file rewrite of one task (temp file + rename).
 */
import { join } from "node:path";
import { createClineSurfaces } from "../../src/adapter/cline/captures/collect.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { combineAdapters } from "../../src/adapter/combine.ts";
import type { Adapter, WatchPlan } from "../../src/adapter/types.ts";
import { CollectorLoop } from "../../src/collector/loop.ts";
import type { PassResult } from "../../src/collector/pass.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { silentLogger } from "../../src/util/log.ts";
import { renameOntoTask, type TaskCorpus, writeTaskHistory } from "./task-corpus.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Both adapters of `run` over the corpus's home, counting discoveries. */
export function daemonSurfaces(c: TaskCorpus): { adapter: Adapter; discovers: () => number } {
  const clineDir = join(c.home, ".cline");
  const inner = combineAdapters("cline", [
    createClineSurfaces(resolveClinePaths({ clineDir }, {}, c.home, c.home), []),
    createClineTasksAdapter(c.roots),
  ]);
  let n = 0;
  const adapter: Adapter = {
    ...inner,
    discover: () => {
      n++;
      return inner.discover();
    },
  };
  return { adapter, discovers: () => n };
}

export interface WatchedLoop {
  readonly loop: CollectorLoop;
  readonly passes: PassResult[];
  stop(): Promise<void>;
}

/** A watching loop (by default sweep and poll at 10 minutes), after its first passes have settled. */
export async function startWatchedLoop(
  adapter: Adapter,
  ledger: Ledger,
  plans: readonly WatchPlan[],
  schedule: { readonly pollIntervalMs: number; readonly sweepIntervalMs?: number } = {
    pollIntervalMs: 600_000,
    sweepIntervalMs: 600_000,
  },
): Promise<WatchedLoop> {
  const passes: PassResult[] = [];
  const loop = new CollectorLoop(adapter, ledger, {
    ...schedule,
    logger: silentLogger,
    watch: { plans },
    onPass: (r) => passes.push(r),
  });
  loop.start();
  while (loop.passCount < 1) await sleep(5);
  await loop.idle();
  await sleep(300);
  await loop.idle();
  return { loop, passes, stop: () => loop.stop() };
}

export interface RenameTrial {
  /** The pass the rename started (PassResult.durationMs). */
  readonly passMs: number;
  /** From the rename to the end of that pass (debounce included). */
  readonly latencyMs: number;
  readonly discovered: boolean;
  readonly eventsAdded: number;
}

/**
 * Task `t` rewritten with `requests` requests through a rename (and taskHistory.json after it,
 * as the legacy core does, when `history` is given: its task count), timed until the pass that
 * read it ends.
 */
export async function timedRename(
  w: WatchedLoop,
  c: TaskCorpus,
  discovers: () => number,
  t: number,
  requests: number,
  history?: number,
): Promise<RenameTrial> {
  await w.loop.idle();
  const from = w.passes.length;
  const d0 = discovers();
  const t0 = performance.now();
  renameOntoTask(c, t, requests);
  if (history !== undefined) writeTaskHistory(c.home, history);
  const deadline = t0 + 10_000;
  for (;;) {
    const p = w.passes.slice(from).find((r) => r.read > 0);
    if (p !== undefined) {
      const latencyMs = performance.now() - t0;
      await w.loop.idle();
      return { passMs: p.durationMs, latencyMs, discovered: discovers() > d0, eventsAdded: p.eventsAdded };
    }
    if (performance.now() > deadline) throw new Error(`no pass read task ${t} within 10 s`);
    await sleep(2);
  }
}
