/**
 * The daemon's collection loop: one pass at a time (runPass), started by filesystem events
 * (debounced) and by a poll timer as the safety net. A change seen during a pass schedules
 * exactly one follow-up pass. The loop never rejects and never stops on one bad source.
 */
import { dirname } from "node:path";
import type { Adapter, Problem } from "../adapter/types.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { Logger } from "../util/log.ts";
import { type PassResult, runPass } from "./pass.ts";
import { DirWatcher } from "./watch.ts";

export interface LoopOptions {
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  /** Directories to watch; undefined = polling only (`--no-watch`). */
  readonly watch?: { readonly sessionsDir: string; readonly dbDir: string } | undefined;
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

/** How long a directory whose documents changed stays watched. */
const HOT_MS = 3600_000;

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
  private readonly hot = new Map<string, number>();
  private readonly now: () => number;
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

  constructor(
    adapter: Adapter,
    private readonly ledger: Ledger,
    private readonly opts: LoopOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.observed = observing(adapter, (path) => this.hot.set(dirname(path), this.now()));
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
      this.watcher = new DirWatcher({
        sessionsDir: this.opts.watch.sessionsDir,
        dbDir: this.opts.watch.dbDir,
        onChange: () => this.changed(),
        logger: this.opts.logger,
      });
      this.refreshWatches();
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

  /** Ask for a pass: now if idle, else exactly one more after the current one. */
  requestPass(): void {
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
  private changed(): void {
    if (this.stopping) return;
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
      this.requestPass();
    }, wait);
  }

  private afterPass(): void {
    if (this.stopping) return;
    if (this.followUp) {
      this.followUp = false;
      this.requestPass();
      return;
    }
    const delay = nextDelay(
      this.failing.size > 0,
      this.retryMs,
      this.opts.retryMs ?? 250,
      this.opts.pollIntervalMs,
    );
    this.retryMs = this.failing.size > 0 ? delay : undefined;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      this.requestPass();
    }, delay);
  }

  private async execute(onResult?: (r: PassResult) => void): Promise<void> {
    const first = this.passes === 0;
    const progress = first ? this.opts.progress : undefined;
    try {
      const result = await runPass(this.observed, this.ledger, {
        ...(progress ? { onProgress: (d: number, t: number) => progress.update(d, t) } : {}),
        shouldStop: () => this.stopping,
      });
      progress?.finish();
      this.passes++;
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
    }
    this.refreshWatches();
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
    if (!this.watcher || this.stopping) return;
    const cutoff = this.now() - HOT_MS;
    for (const [dir, ms] of this.hot) if (ms < cutoff) this.hot.delete(dir);
    try {
      this.watcher.refresh([...this.hot.entries()].sort((a, b) => b[1] - a[1]).map(([d]) => d));
    } catch (e) {
      this.opts.logger.debug(`watch refresh failed: ${String(e)}; polling continues`);
    }
  }

  private clearTimer(which: "poll" | "debounce"): void {
    const t = which === "poll" ? this.pollTimer : this.debounceTimer;
    if (t !== undefined) clearTimeout(t);
    if (which === "poll") this.pollTimer = undefined;
    else this.debounceTimer = undefined;
  }
}

/** The adapter, reporting each document it actually read (its directory becomes watched). */
function observing(adapter: Adapter, onRead: (path: string) => void): Adapter {
  return {
    id: adapter.id,
    displayName: adapter.displayName,
    capabilities: () => adapter.capabilities(),
    discover: () => adapter.discover(),
    collect: (s) => adapter.collect(s),
    async collectIncremental(source, checkpoint) {
      const obs = await adapter.collectIncremental(source, checkpoint);
      if (obs.status === "read") onRead(source.path);
      return obs;
    },
  };
}
