import type {
  Adapter,
  Observation,
  Problem,
  Source,
  SourceCheckpoint,
  SourceListing,
} from "../adapter/types.ts";
import type { Ledger, PathOf } from "../ledger/ledger.ts";
import { boundYoungGeneration } from "../util/heap.ts";
import { loopTurn, turnDue } from "./yield.ts";

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
  /** File edits the pass added (the observations' `edits`, each once by its key); absent: none. */
  readonly editsAdded?: number;
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

/**
 * A pass with at least this many sources that have no checkpoint yet is a backfill (a first
 * run, a new ledger): it reads BACKFILL_READ_AHEAD sources ahead instead of READ_AHEAD, so the
 * reads (in a worker thread where the adapter has one: src/adapter/cline/background-reader.ts)
 * go on while a whole batch commits (the window is refilled from half: at least half a batch is
 * read ahead). Ordinary passes keep READ_AHEAD and never start a worker.
 */
export const BACKFILL_MIN_SOURCES = 128;
/**
 * A backfill's batches: more sources per commit (rows still bounded by COMMIT_BATCH_ROWS), so
 * the index pages every batch dirties are written to the WAL 4x less often. Measured on the
 * 10,000-session backfill: 234 -> 188 MB written, main-thread CPU -5 % (docs/performance.md).
 * A crash loses at most one batch, checkpoints included: its sources are read again.
 */
export const BACKFILL_BATCH_SOURCES = 256;
export const BACKFILL_READ_AHEAD = BACKFILL_BATCH_SOURCES;

/** Sources per commit: BACKFILL_BATCH_SOURCES in a backfill (`fresh` as in readAheadFor), else COMMIT_BATCH_SOURCES. */
export function batchSourcesFor(fresh: number): number {
  return fresh >= BACKFILL_MIN_SOURCES ? BACKFILL_BATCH_SOURCES : COMMIT_BATCH_SOURCES;
}

/**
 * How many sources a pass reads ahead: `requested` when given, else BACKFILL_READ_AHEAD for a
 * backfill (`fresh` sources without a checkpoint), else READ_AHEAD. At least 1.
 */
export function readAheadFor(fresh: number, requested?: number): number {
  if (requested !== undefined) return Math.max(1, requested);
  return fresh >= BACKFILL_MIN_SOURCES ? BACKFILL_READ_AHEAD : READ_AHEAD;
}

/**
 * How many sources the pass may have read or being read ahead of the one it commits next:
 * `window`, but no more than a batch's worth of rows (COMMIT_BATCH_ROWS) at the largest source
 * read so far (`maxSourceRows`, undefined before the first), and at least READ_AHEAD. So a
 * backfill of small sessions reads ~130 ahead, one of 1 MB documents a dozen, and a pass holds
 * one batch being built (COMMIT_BATCH_ROWS) plus about as many rows read ahead. Only sources larger than all
 * before them can exceed it, by what was already in flight when the first of them was read.
 */
export function readAheadLimit(window: number, maxSourceRows: number | undefined): number {
  if (maxSourceRows === undefined) return Math.min(window, READ_AHEAD);
  const byRows = Math.floor(COMMIT_BATCH_ROWS / Math.max(1, maxSourceRows));
  return Math.min(window, Math.max(READ_AHEAD, byRows));
}

/** The rows a read observation adds to a batch (its checkpoint counts as one). */
function rowsOf(obs: Observation): number {
  if (obs.status !== "read") return 0;
  // A timeline's gaps, each at most a row (the ledger sums them per type and hour: usually fewer).
  let gaps = 0;
  for (const t of obs.activeTime ?? []) gaps += t.startMs.length;
  const activity = gaps + (obs.deliveries?.length ?? 0) + (obs.sessionStarts?.length ?? 0);
  return obs.events.length + obs.toolCalls.length + (obs.edits?.length ?? 0) + activity + 1;
}

export interface PassOptions {
  /** How many sources are collected ahead of the commit (default: readAheadFor; 1 = none). */
  readonly readAhead?: number;
  readonly onProgress?: (done: number, total: number) => void;
  /** Checked between sources so a shutdown finishes the source at hand, not the pass. */
  readonly shouldStop?: () => boolean;
  /** The caller's string for a source path it knows: checkpoints loaded by this pass share it (PathOf). */
  readonly pathOf?: PathOf;
}

/**
 * One collection pass: discover, then collect each source incrementally and commit its
 * events with its checkpoint. One bad source never stops the others; a failed source
 * keeps its old checkpoint and is retried next pass.
 */
export async function runPass(adapter: Adapter, ledger: Ledger, opts: PassOptions = {}): Promise<PassResult> {
  const started = performance.now();
  // Handed to discovery, which may use them (Adapter.discover): a source's checkpoint only
  // changes by its own commit, which comes after its collection. Loaded on first use: a pass
  // whose discovery lists no source (a tree proved unchanged, a HOME without Cline data) loads none.
  const known = ledger.knownCheckpoints(opts.pathOf);
  const {
    sources,
    problems: discoverProblems,
    listings = [],
    unchangedUnlisted = 0,
  } = await adapter.discover(known);
  const checkpoints: ReadonlyMap<string, SourceCheckpoint> = sources.length === 0 ? new Map() : known.all();
  const problems: Problem[] = [...discoverProblems];
  const checkpointsPruned = pruneGone(ledger, sources, listings);
  boundYoungGeneration();
  const failedPaths: string[] = [];
  const failedNow = new Set<string>();
  let read = 0;
  let unchanged = unchangedUnlisted;
  let eventsAdded = 0;
  let callsAdded = 0;
  let editsAdded = 0;
  let captureFiles = 0;
  let captureFilesRead = 0;
  let capturesAdded = 0;
  let done = unchangedUnlisted;
  const total = sources.length + unchangedUnlisted;
  // Read ahead: the next few documents are read and scanned while the current one commits,
  // so the disk and the CPU overlap. Commits stay in source order, in batches of sources.
  // "unchanged": the adapter answered synchronously (Adapter.unchangedNow), nothing to await.
  // By source index (launched === pending.length), each slot cleared once taken: an array, not
  // a map, so a sweep over 10,000 unchanged sources hashes nothing.
  const pending: (Promise<Observation> | "unchanged" | undefined)[] = [];
  let fresh = 0;
  for (const s of sources) if (!checkpoints.has(s.path)) fresh++;
  const window = readAheadFor(fresh, opts.readAhead);
  const batchSources = batchSourcesFor(fresh);
  let launched = 0;
  // The largest source read so far, in rows: what bounds the read-ahead (readAheadLimit).
  let maxSourceRows: number | undefined;
  const collect = (source: Source): Promise<Observation> =>
    adapter
      .collectIncremental(source, checkpoints.get(source.path))
      .catch(
        (e: unknown): Observation => ({
          // An adapter bug must not take the other sources down with it.
          status: "failed",
          source,
          problem: { path: source.path, code: "internal", detail: String(e) },
        }),
      )
      .then((obs) => {
        maxSourceRows = Math.max(maxSourceRows ?? 0, rowsOf(obs));
        return obs;
      });
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
      editsAdded += r.editsAdded ?? 0;
      // An edit the ledger could not store (an adapter's bug): reported, the rest committed.
      for (const x of r.editsInvalid ?? [])
        problems.push({ path: b.obs.source.path, code: "invalid-edit", detail: `${x.editKey}: ${x.reason}` });
      if (b.capture) captureFilesRead++;
      capturesAdded += r.capturesAdded ?? 0;
      problems.push(...b.obs.problems);
    }
    batch = [];
    batchRows = 0;
  };
  // A turn of the event loop (yield.ts) before each source, when one is due; a stop asked
  // meanwhile is seen right after it. Not between the launches of a burst: the reader counts what
  // is in flight there to decide on its worker (a burst of small documents read in this thread is
  // ~30 ms, a backfill's commit ~40: docs/performance.md, "Memory at 30,000 sessions, and a pass
  // that gives the loop a turn").
  let lastTurn = performance.now();
  const turnThenStop = async (): Promise<boolean> => {
    if (turnDue(performance.now() - lastTurn)) {
      await loopTurn();
      lastTurn = performance.now();
    }
    return opts.shouldStop?.() === true;
  };
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i] as Source;
    if (await turnThenStop()) break;
    // The source at hand and those after it up to the limit, in bursts (refilled from half the
    // limit) so an adapter may hand them on together.
    const limit = readAheadLimit(window, maxSourceRows);
    const refill = launched - i <= Math.floor(limit / 2);
    while (refill && launched < sources.length && launched < i + limit) {
      const next = sources[launched] as Source;
      const cp = checkpoints.get(next.path);
      pending.push(cp !== undefined && adapter.unchangedNow?.(next, cp) ? "unchanged" : collect(next));
      launched++;
    }
    const capture = isCaptureSource(source);
    if (capture) captureFiles++;
    const next = pending[i] as Promise<Observation> | "unchanged";
    pending[i] = undefined;
    const obs = next === "unchanged" ? undefined : await next;
    if (obs === undefined || obs.status === "unchanged") unchanged++;
    else if (obs.status === "failed") {
      problems.push(obs.problem);
      failedPaths.push(source.path);
      failedNow.add(source.path);
    } else if (source.after !== undefined && failedNow.has(source.after)) {
      // What it relies on was not committed: not this one either (no checkpoint: read again).
      problems.push({
        path: source.path,
        code: "deferred",
        detail: `${source.after} could not be read in this pass; this file is read with it next pass`,
      });
      failedPaths.push(source.path);
      failedNow.add(source.path);
    } else {
      batch.push({ obs, capture });
      batchRows += rowsOf(obs);
      if (batch.length >= batchSources || batchRows >= COMMIT_BATCH_ROWS) flush();
    }
    done++;
    opts.onProgress?.(done, total);
  }
  flush();
  return {
    sources: total,
    read,
    unchanged,
    failed: failedPaths.length,
    eventsAdded,
    callsAdded,
    ...(editsAdded === 0 ? {} : { editsAdded }),
    problems,
    failedPaths,
    durationMs: performance.now() - started,
    ...(captureFiles > 0 || capturesAdded > 0
      ? { captures: { files: captureFiles, read: captureFilesRead, added: capturesAdded } }
      : {}),
    ...(checkpointsPruned > 0 ? { checkpointsPruned } : {}),
  };
}
