/**
 * The daemon's collection loop: one pass at a time (runPass), started by filesystem events
 * (debounced) and by a timer as the safety net. A change seen during a pass schedules exactly
 * one follow-up pass. The loop never rejects and never stops on one bad source.
 *
 * Watching drives the work. A pass started by events looks only at what the events named: it
 * reuses the last discovery unless an event said the set of sources changed, and a source in a
 * watched directory that no event named is "unchanged" without even a stat, and so is one in a
 * directory the watcher left to the sweep (more source folders than watches: the oldest). The
 * timer's sweep (every `sweepIntervalMs` while every directory is watched or left to the sweep,
 * every `pollIntervalMs` otherwise) is a full pass: discovery and a stat of every source, in case
 * an event was lost.
 */
import { dirname } from "node:path";
import type {
  Adapter,
  DiscoverResult,
  Observation,
  Problem,
  Source,
  SourceCheckpoint,
} from "../adapter/types.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { Logger } from "../util/log.ts";
import { type PassResult, runPass } from "./pass.ts";
import { emptyScope, needsDiscovery, type PassScope } from "./scope.ts";
import { DirWatcher, type WatchEvent, type WatchPlan } from "./watch.ts";

export interface LoopOptions {
  /** Full passes this often when not watching, or when some directory could not be watched. */
  readonly pollIntervalMs: number;
  /** Full passes this often while every directory is watched (default 60 s, at least the poll). */
  readonly sweepIntervalMs?: number;
  readonly logger: Logger;
  /** Directories to watch (the adapter's `watchPlans`); undefined = polling only (`--no-watch`). */
  readonly watch?:
    | {
        readonly plans: readonly WatchPlan[];
        /** Upper bound on watched source directories. */
        readonly maxDirs?: number;
      }
    | undefined;
  /** Quiet time after a change before the pass starts: Cline truncates, then writes. */
  readonly debounceMs?: number;
  /** Longest a burst of changes can hold a pass back. */
  readonly maxDebounceMs?: number;
  /** First retry delay for sources that failed (torn writes); doubles up to the poll interval. */
  readonly retryMs?: number;
  readonly onPass?: (result: PassResult) => void;
  /** Progress of the first pass (a first run over a large history). */
  readonly progress?: { update(done: number, total: number): void; finish(): void };
  readonly now?: () => number;
}

/** The safety-net sweep while everything is watched: a lost event costs at most this long. */
export const SWEEP_INTERVAL_MS = 60_000;

export interface FailureChanges {
  readonly next: Map<string, Problem>;
  /** Sources that failed this pass and not the one before. */
  readonly started: Problem[];
  /** Sources that failed before and were read (or gone) this pass. */
  readonly recovered: string[];
}

/**
 * Log-once bookkeeping of failing sources. Only a complete pass can clear a failure: a pass
 * cut short by shutdown did not look at every source.
 */
export function trackSourceFailures(
  prev: ReadonlyMap<string, Problem>,
  pass: Pick<PassResult, "problems" | "failedPaths">,
  complete: boolean,
): FailureChanges {
  const failedNow = new Map<string, Problem>();
  const failed = new Set(pass.failedPaths);
  for (const p of pass.problems) if (failed.has(p.path)) failedNow.set(p.path, p);
  for (const path of failed) {
    if (!failedNow.has(path)) failedNow.set(path, { path, code: "failed", detail: "" });
  }
  const started = [...failedNow.values()].filter((p) => !prev.has(p.path));
  if (!complete) {
    return { next: new Map([...prev, ...failedNow]), started, recovered: [] };
  }
  const recovered = [...prev.keys()].filter((path) => !failedNow.has(path));
  return { next: failedNow, started, recovered };
}

/** The one info line of a pass that did something, or undefined for a quiet pass. */
export function describePass(
  r: PassResult,
  changes: Pick<FailureChanges, "started" | "recovered" | "next">,
): string | undefined {
  if (r.eventsAdded === 0 && r.callsAdded === 0 && r.read === 0 && changes.started.length === 0)
    return undefined;
  const c = r.captures;
  const parts =
    c === undefined
      ? [
          `${r.read} of ${r.sources} documents read`,
          `+${r.eventsAdded} events`,
          `+${r.callsAdded} tool calls`,
        ]
      : [
          `${r.read - c.read} of ${r.sources - c.files} documents read`,
          `${c.read} of ${c.files} capture files read`,
          `+${r.eventsAdded} events`,
          `+${r.callsAdded} tool calls`,
          `+${c.added} captures`,
        ];
  if ((r.editsAdded ?? 0) > 0) parts.push(`+${r.editsAdded} edits`);
  if (changes.next.size > 0) parts.push(`${changes.next.size} failing`);
  const rejected = r.problems.length - r.failed;
  if (rejected > 0) parts.push(`${rejected} problems`);
  return `pass: ${parts.join(", ")} (${Math.round(r.durationMs)} ms)`;
}

/** The next retry delay after a pass: fast retries while sources fail, back to polling otherwise. */
export function nextDelay(
  failing: boolean,
  prevRetryMs: number | undefined,
  retryMs: number,
  pollMs: number,
): number {
  if (!failing) return pollMs;
  return Math.min(pollMs, prevRetryMs === undefined ? retryMs : prevRetryMs * 2);
}

export class CollectorLoop {
  private readonly observed: Adapter;
  private readonly now: () => number;
  /** What the next pass looks at; the pass running now has its own. */
  private next: PassScope = emptyScope(true);
  private scope: PassScope = emptyScope(true);
  private lastDiscovery: DiscoverResult | undefined;
  /** The last discovery's source paths, each to itself (its string is the one checkpoints share: PathOf). */
  private known = new Map<string, string>();
  /** The folders of the sources they were computed from (the watch refresh's input). */
  private sourceDirs: { readonly sources: readonly Source[]; readonly dirs: ReadonlySet<string> } | undefined;
  /** The sources of the last discovery a finished pass used (and so pruned the checkpoints by). */
  private prunedSources: readonly Source[] | undefined;
  private failing = new Map<string, Problem>();
  private current: Promise<void> | undefined;
  private followUp = false;
  private stopping = false;
  private started = false;
  private passes = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private burstStart: number | undefined;
  private retryMs: number | undefined;
  private lastPassError: string | undefined;
  private watcher: DirWatcher | undefined;
  /** Folders left to the sweep in which this pass looked at a known document again. */
  private readonly resumed = new Set<string>();
  /**
   * Whether the pass at hand reuses the last discovery: its stats are older than this pass, so the
   * adapter's synchronous gate (which may answer from them) is not asked (see `scoped`).
   */
  private discoveryReused = false;

  constructor(
    adapter: Adapter,
    private readonly ledger: Ledger,
    private readonly opts: LoopOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.observed = scoped(adapter, {
      discover: async () => {
        const last = this.lastDiscovery;
        this.discoveryReused = last !== undefined && !needsDiscovery(this.scope);
        if (last !== undefined && this.discoveryReused) {
          // A reused discovery lists nothing new: its checkpoints were pruned when it was fresh.
          return { ...last, listings: [] };
        }
        const before = last?.sources;
        const d = await adapter.discover();
        this.lastDiscovery = d;
        // An idle sweep finds the very same sources (an adapter hands the same objects on): the
        // set of their paths is the one already built, not 10,000 paths hashed again.
        if (before === undefined || !sameSources(before, d.sources)) {
          this.known = new Map(d.sources.map((s) => [s.path, s.path]));
        }
        // The same sources a finished pass already pruned by: no checkpoint can be gone since (a
        // commit adds only listed sources'), so no prune and no set of every live path.
        if (this.prunedSources !== undefined && sameSources(this.prunedSources, d.sources)) {
          return { ...d, listings: [] };
        }
        return d;
      },
      isClean: (source, checkpoint) => this.isClean(source, checkpoint),
      discoveryReused: () => this.discoveryReused,
      lookingAgain: (source) => {
        // A known document changed in a folder left to the sweep: watch it (promoteWatches).
        const dir = dirname(source.path);
        if (this.watcher?.sweptOnly(dir) === true) this.resumed.add(dir);
      },
    });
  }

  /**
   * A source an event pass need not look at: it has a checkpoint, it is not failing, its
   * directory is watched (or left to the sweep by the watch budget) and no event named it or its
   * directory since the last pass.
   */
  private isClean(source: Source, checkpoint: SourceCheckpoint | undefined): boolean {
    const s = this.scope;
    if (s.full || checkpoint === undefined || this.failing.has(source.path)) return false;
    const dir = dirname(source.path);
    const w = this.watcher;
    if (w === undefined || !(w.covers(dir) || w.sweptOnly(dir))) return false;
    return !s.paths.has(source.path) && !s.dirs.has(dir);
  }

  /** The directories watched now (tests, debug). */
  watchedDirs(): string[] {
    return this.watcher?.watched() ?? [];
  }

  /** Number of passes finished so far. */
  get passCount(): number {
    return this.passes;
  }

  /** Start watching and run the first pass now. */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.opts.watch) {
      const w = this.opts.watch;
      this.watcher = new DirWatcher({
        ...w,
        onChange: (e) => this.changed(e),
        logger: this.opts.logger,
      });
    }
    this.requestPass();
  }

  /** One pass outside the daemon schedule (`run --once`); never rejects. */
  async runOnce(): Promise<PassResult | undefined> {
    await this.idle();
    let result: PassResult | undefined;
    const run = this.execute((r) => {
      result = r;
    });
    this.current = run;
    try {
      await run;
    } finally {
      this.current = undefined;
    }
    return result;
  }

  /** Ask for a full pass: now if idle, else exactly one more after the current one. */
  requestPass(): void {
    this.next.full = true;
    this.next.rediscover = true;
    this.schedulePass();
  }

  private schedulePass(): void {
    if (this.stopping) return;
    if (this.current !== undefined) {
      this.followUp = true;
      return;
    }
    this.clearTimer("poll");
    this.current = this.execute().finally(() => {
      this.current = undefined;
      this.afterPass();
    });
  }

  /** Stop: the pass at hand finishes its current source, then no further pass starts. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.clearTimer("poll");
    this.clearTimer("debounce");
    this.watcher?.close();
    await this.current;
  }

  /** Resolves when no pass is running (tests). */
  async idle(): Promise<void> {
    while (this.current !== undefined) await this.current;
  }

  /** A filesystem event: debounce, but never hold a pass back longer than maxDebounceMs. */
  private changed(e: WatchEvent): void {
    if (this.stopping) return;
    if (e.path !== undefined) this.next.paths.add(e.path);
    // A change of a file no discovery has seen yet: a new source.
    if (e.rediscover || (e.path !== undefined && !this.known.has(e.path))) this.next.rediscover = true;
    else if (e.renamed === true && e.path !== undefined) this.next.renamed.add(e.path);
    const t = this.now();
    this.burstStart ??= t;
    this.clearTimer("debounce");
    const wait = Math.max(
      0,
      Math.min(this.opts.debounceMs ?? 100, this.burstStart + (this.opts.maxDebounceMs ?? 500) - t),
    );
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      this.burstStart = undefined;
      this.schedulePass();
    }, wait);
  }

  private afterPass(): void {
    if (this.stopping) return;
    if (this.followUp) {
      this.followUp = false;
      this.schedulePass();
      return;
    }
    // Everything watched: events bring the work, the sweep is the rare safety net.
    const sweep =
      this.watcher?.complete === true
        ? Math.max(this.opts.pollIntervalMs, this.opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS)
        : this.opts.pollIntervalMs;
    const failing = this.failing.size > 0;
    const delay = nextDelay(failing, this.retryMs, this.opts.retryMs ?? 250, sweep);
    this.retryMs = failing ? delay : undefined;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      // A retry of failing sources looks at them (and at what events named), not at everything.
      if (failing && delay < sweep) this.schedulePass();
      else this.requestPass();
    }, delay);
  }

  private async execute(onResult?: (r: PassResult) => void): Promise<void> {
    // This pass takes what was asked so far; events from now on are the next pass's.
    this.scope = this.next;
    this.next = emptyScope(false);
    const first = this.passes === 0;
    const progress = first ? this.opts.progress : undefined;
    try {
      const result = await runPass(this.observed, this.ledger, {
        ...(progress ? { onProgress: (d: number, t: number) => progress.update(d, t) } : {}),
        shouldStop: () => this.stopping,
        pathOf: (path) => this.known.get(path),
      });
      progress?.finish();
      this.passes++;
      this.prunedSources = this.lastDiscovery?.sources;
      // Watches before the pass is reported: once its line is logged, whatever is written next
      // is seen (a test, or a user, may act on that line).
      this.refreshWatches();
      this.promoteWatches();
      this.report(result);
      onResult?.(result);
      this.lastPassError = undefined;
    } catch (e) {
      progress?.finish();
      // Discovery or the ledger itself failed (disk full, ...): log once per distinct error, retry.
      const msg = e instanceof Error ? e.message : String(e);
      if (msg !== this.lastPassError) this.opts.logger.error(`collection pass failed: ${msg}; retrying`);
      this.lastPassError = msg;
      this.failing.set("(pass)", { path: "(pass)", code: "pass-failed", detail: msg });
      // Nothing of this pass's scope was looked at for sure: the next pass starts from scratch.
      this.next.full = true;
      this.next.rediscover = true;
      this.refreshWatches();
    }
  }

  private report(result: PassResult): void {
    const complete = !this.stopping;
    this.failing.delete("(pass)");
    const changes = trackSourceFailures(this.failing, result, complete);
    this.failing = changes.next;
    const log = this.opts.logger;
    for (const p of changes.started) log.warn(`source failing: ${p.path} (${p.code}: ${p.detail}); retrying`);
    for (const path of changes.recovered) log.info(`source recovered: ${path}`);
    const line = describePass(result, changes);
    if (line !== undefined) log.info(line);
    else log.debug(`pass: nothing new (${result.sources} documents, ${Math.round(result.durationMs)} ms)`);
    for (const p of result.problems) log.debug(`problem ${p.code}: ${p.path}: ${p.detail}`);
    try {
      this.opts.onPass?.(result);
    } catch (e) {
      log.error(`pass hook failed: ${String(e)}`);
    }
  }

  private refreshWatches(): void {
    if (!this.watcher || this.stopping || this.lastDiscovery === undefined) return;
    try {
      const dirs = this.dirsOf(this.lastDiscovery.sources);
      const added = this.watcher.refresh(dirs);
      // What changed in a directory before its watch existed is unknown: look at it once more.
      for (const d of added) this.next.dirs.add(d);
      // A folder no discovery listed a source in (it appeared after the discovery, or holds none
      // yet): a document that reached it before its watch is found only by discovering again.
      if (added.some((d) => !dirs.has(d))) this.next.rediscover = true;
      if (added.length > 0 && this.passes > 0) this.schedulePass();
    } catch (e) {
      this.opts.logger.debug(`watch refresh failed: ${String(e)}; polling continues`);
    }
  }

  /** Watches the folders left to the sweep that this pass found changed (DirWatcher.promote). */
  private promoteWatches(): void {
    if (this.resumed.size === 0) return;
    const dirs = [...this.resumed];
    this.resumed.clear();
    if (!this.watcher || this.stopping) return;
    // Written to between the pass's read and the new watch: looked at once more.
    const added = this.watcher.promote(dirs);
    for (const d of added) this.next.dirs.add(d);
    if (added.length > 0) this.schedulePass();
  }

  /** The sources' folders: the last set while the sources are the same (sameDirSet then answers at once). */
  private dirsOf(sources: readonly Source[]): ReadonlySet<string> {
    const last = this.sourceDirs;
    if (last !== undefined && sameSources(last.sources, sources)) return last.dirs;
    const dirs = new Set(sources.map((s) => dirname(s.path)));
    this.sourceDirs = { sources, dirs };
    return dirs;
  }

  private clearTimer(which: "poll" | "debounce"): void {
    const t = which === "poll" ? this.pollTimer : this.debounceTimer;
    if (t !== undefined) clearTimeout(t);
    if (which === "poll") this.pollTimer = undefined;
    else this.debounceTimer = undefined;
  }
}

/** Whether two discoveries found the same source objects, in the same order. */
export function sameSources(a: readonly Source[], b: readonly Source[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The adapter as a pass of the loop sees it: discovery as the loop decides (fresh or the last
 * one), and sources the loop knows to be clean answered "unchanged" without a stat.
 */
function scoped(
  adapter: Adapter,
  hooks: {
    readonly discover: () => Promise<DiscoverResult>;
    readonly isClean: (source: Source, checkpoint: SourceCheckpoint | undefined) => boolean;
    readonly discoveryReused: () => boolean;
    /** A source with a checkpoint the pass looks at again (its stat changed, or it was named). */
    readonly lookingAgain: (source: Source) => void;
  },
): Adapter {
  return {
    id: adapter.id,
    discover: hooks.discover,
    collectIncremental(source, checkpoint): Promise<Observation> {
      if (checkpoint !== undefined) {
        if (hooks.isClean(source, checkpoint))
          return Promise.resolve({ status: "unchanged", source, checkpoint });
        hooks.lookingAgain(source);
      }
      return adapter.collectIncremental(source, checkpoint);
    },
    // The same answer without a promise per source (an event pass at 10,000 sources: ~15 ms). Not
    // the adapter's own when the discovery is reused: it may answer from that discovery's stat
    // (Adapter.unchangedNow), taken before a change that no watch saw (a folder watched only after
    // the pass that found it); collectIncremental stats the source now.
    unchangedNow: (source, checkpoint) =>
      hooks.isClean(source, checkpoint) ||
      (!hooks.discoveryReused() && (adapter.unchangedNow?.(source, checkpoint) ?? false)),
  };
}
