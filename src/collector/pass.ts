import type { Adapter, Observation, Problem, Source, SourceListing } from "../adapter/types.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { boundYoungGeneration } from "../util/heap.ts";

/** The provider-request capture files of a pass, counted apart from the message documents. */
export interface CaptureFileCounts {
  /** Capture files among the pass's `sources`. */
  readonly files: number;
  /** Capture files among the pass's `read`. */
  readonly read: number;
  /** Capture records the ledger did not have yet. */
  readonly added: number;
}

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
  /** Present when the pass met capture files: how many of `sources` / `read` they are. */
  readonly captures?: CaptureFileCounts;
  /** Checkpoints dropped because discovery listed their surface and the file was gone. */
  readonly checkpointsPruned?: number;
}

/** Whether a source is a request-capture file (counted apart from the documents). */
export function isCaptureSource(source: Pick<Source, "kind">): boolean {
  return source.kind === "capture-file";
}

/**
 * Drops the checkpoints of files a complete listing no longer has (deleted by the agent, e.g.
 * Cline's 24-hour capture cleanup), in one transaction. Only the listed surface's checkpoints,
 * and never under a dir the listing could not read.
 */
export function pruneGone(
  ledger: Ledger,
  sources: readonly Source[],
  listings: readonly SourceListing[],
): number {
  let pruned = 0;
  for (const l of listings) {
    const live = new Set(sources.filter((s) => s.adapterId === l.adapterId).map((s) => s.path));
    pruned += ledger.pruneCheckpoints(l.adapterId, live, l.unlisted);
  }
  return pruned;
}

/** Documents read ahead of the one being committed (see runPass). */
export const READ_AHEAD = 2;

/**
 * Sources committed together in one transaction (all or none, checkpoints included): one WAL
 * commit for many small sessions instead of one each. Bounded by rows too, so a batch of large
 * documents holds at most this many parsed rows in memory.
 */
export const COMMIT_BATCH_SOURCES = 64;
export const COMMIT_BATCH_ROWS = 8192;

export interface PassOptions {
  /** How many sources are collected ahead of the commit (default READ_AHEAD; 1 = none). */
  readonly readAhead?: number;
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
  const { sources, problems: discoverProblems, listings = [] } = await adapter.discover();
  const problems: Problem[] = [...discoverProblems];
  const checkpointsPruned = pruneGone(ledger, sources, listings);
  boundYoungGeneration();
  const failedPaths: string[] = [];
  let read = 0;
  let unchanged = 0;
  let eventsAdded = 0;
  let callsAdded = 0;
  let captureFiles = 0;
  let captureFilesRead = 0;
  let capturesAdded = 0;
  let done = 0;
  // Read ahead: the next few documents are read and scanned while the current one commits,
  // so the disk and the CPU overlap. Commits stay in source order, in batches of sources.
  const window = Math.max(1, opts.readAhead ?? READ_AHEAD);
  const pending = new Map<number, Promise<Observation>>();
  // A source's checkpoint only changes by its own commit, which comes after its collection.
  const checkpoints = ledger.allCheckpoints();
  let launched = 0;
  const collect = (source: Source): Promise<Observation> =>
    adapter.collectIncremental(source, checkpoints.get(source.path)).catch(
      (e: unknown): Observation => ({
        // An adapter bug must not take the other sources down with it.
        status: "failed",
        source,
        problem: { path: source.path, code: "internal", detail: String(e) },
      }),
    );
  let batch: { readonly obs: Extract<Observation, { status: "read" }>; readonly capture: boolean }[] = [];
  let batchRows = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    const results = ledger.commitAll(batch.map((b) => b.obs));
    // Between batches: V8's young generation grows up to its cap, not past it (src/util/heap.ts).
    boundYoungGeneration();
    for (const [k, r] of results.entries()) {
      const b = batch[k] as (typeof batch)[number];
      read++;
      eventsAdded += r.eventsAdded;
      callsAdded += r.callsAdded;
      if (b.capture) captureFilesRead++;
      capturesAdded += r.capturesAdded ?? 0;
      problems.push(...b.obs.problems);
    }
    batch = [];
    batchRows = 0;
  };
  for (const [i, source] of sources.entries()) {
    if (opts.shouldStop?.()) break;
    while (launched < sources.length && launched < i + window) {
      pending.set(launched, collect(sources[launched] as Source));
      launched++;
    }
    const capture = isCaptureSource(source);
    if (capture) captureFiles++;
    const obs = await (pending.get(i) as Promise<Observation>);
    pending.delete(i);
    if (obs.status === "unchanged") unchanged++;
    else if (obs.status === "failed") {
      problems.push(obs.problem);
      failedPaths.push(source.path);
    } else {
      batch.push({ obs, capture });
      batchRows += obs.events.length + obs.toolCalls.length + 1;
      if (batch.length >= COMMIT_BATCH_SOURCES || batchRows >= COMMIT_BATCH_ROWS) flush();
    }
    done++;
    opts.onProgress?.(done, sources.length);
  }
  flush();
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
    ...(captureFiles > 0 || capturesAdded > 0
      ? { captures: { files: captureFiles, read: captureFilesRead, added: capturesAdded } }
      : {}),
    ...(checkpointsPruned > 0 ? { checkpointsPruned } : {}),
  };
}
