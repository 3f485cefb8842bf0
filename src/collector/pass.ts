import type { Adapter, Problem } from "../adapter/types.ts";
import type { Ledger } from "../ledger/ledger.ts";

export interface PassResult {
  readonly sources: number;
  readonly read: number;
  readonly unchanged: number;
  readonly failed: number;
  readonly eventsAdded: number;
  readonly callsAdded: number;
  /** Every problem of this pass: discovery, per-source failures and rejected messages. */
  readonly problems: readonly Problem[];
  /** Paths that failed this pass (torn writes and the like): retried next pass. */
  readonly failedPaths: readonly string[];
  readonly durationMs: number;
}

export interface PassOptions {
  readonly onProgress?: (done: number, total: number) => void;
  /** Checked between sources so a shutdown finishes the source at hand, not the pass. */
  readonly shouldStop?: () => boolean;
}

/**
 * One collection pass: discover, then collect each source incrementally and commit its
 * events with its checkpoint. One bad source never stops the others; a failed source
 * keeps its old checkpoint and is retried next pass.
 */
export async function runPass(adapter: Adapter, ledger: Ledger, opts: PassOptions = {}): Promise<PassResult> {
  const started = performance.now();
  const { sources, problems: discoverProblems } = await adapter.discover();
  const problems: Problem[] = [...discoverProblems];
  const failedPaths: string[] = [];
  let read = 0;
  let unchanged = 0;
  let eventsAdded = 0;
  let callsAdded = 0;
  let done = 0;
  for (const source of sources) {
    if (opts.shouldStop?.()) break;
    let obs: Awaited<ReturnType<Adapter["collectIncremental"]>>;
    try {
      obs = await adapter.collectIncremental(source, ledger.getCheckpoint(source.path));
    } catch (e) {
      // An adapter bug must not take the other sources down with it.
      obs = { status: "failed", source, problem: { path: source.path, code: "internal", detail: String(e) } };
    }
    if (obs.status === "unchanged") unchanged++;
    else if (obs.status === "failed") {
      problems.push(obs.problem);
      failedPaths.push(source.path);
    } else {
      const r = ledger.commit(obs);
      read++;
      eventsAdded += r.eventsAdded;
      callsAdded += r.callsAdded;
      problems.push(...obs.problems);
    }
    done++;
    opts.onProgress?.(done, sources.length);
  }
  return {
    sources: sources.length,
    read,
    unchanged,
    failed: failedPaths.length,
    eventsAdded,
    callsAdded,
    problems,
    failedPaths,
    durationMs: performance.now() - started,
  };
}
