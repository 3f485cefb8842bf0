/**
 * Reads messages documents in a worker thread while the main thread commits, so a backfill uses
 * two cores: scanning and parsing there, the ledger's inserts here. Only when the pass reads far
 * ahead (a backfill: src/collector/pass.ts BACKFILL_READ_AHEAD) and the machine has a core to
 * spare (hasIdleCore); an ordinary pass never starts it.
 * Written by hand because what crosses the thread is our own Observation, in order, with a
 * fallback: nothing a pool library would add.
 *
 * Same results either way: the worker runs the very function the main thread would
 * (collectIfChanged over collectDocument), and a worker that cannot start or dies (a build
 * without its file, an out-of-memory kill) hands its reads back to the main thread, which reads
 * them itself. The worker is unref'd (never keeps the process alive) and ended once no read has
 * been in flight for WORKER_IDLE_MS, so its heap is gone before an export that follows.
 */
import { availableParallelism, loadavg } from "node:os";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { collectIfChanged } from "../fingerprint.ts";
import type { Observation, Source, SourceCheckpoint } from "../types.ts";
import { collectDocument } from "./document.ts";

/** Reads in flight at once from which the worker is worth its start-up (~30 ms): a backfill's. */
export const WORKER_MIN_IN_FLIGHT = 8;
/**
 * The worker is started only while the machine has a core to spare for it: the others' work
 * (the 1-minute load average, which a process a second old is hardly part of yet) leaves two
 * cores, this process's main thread and the worker, within IDLE_CORE_MARGIN. On a busy machine a
 * second thread only adds CPU (measured on 2 cores at load 2-4: main thread -20 %, process CPU
 * +18 %, wall +10-15 %); with a core to spare it takes the scan off the thread that commits.
 * Checked at most every WORKER_GATE_MS while it says no.
 */
export const IDLE_CORE_MARGIN = 0.5;
const WORKER_GATE_MS = 1000;

/**
 * Cores a machine needs before the worker is tried at all. On 2 cores it is slower even with both
 * idle (measured 2026-12-05, docs/performance.md "The document worker on two idle cores": the cold
 * backfill of 10,000 sessions 9.0-9.7 s wall without it, 10.6-15.3 s with it; CPU +30-50 %): a read
 * costs the worker about twice the main thread's (a cold isolate, its small young generation, the
 * structured clone both ways), so the main thread waits for it more than it saves. Machines with
 * more cores were not measured; there a core idle beside the pipeline's two can absorb the rest.
 */
export const MIN_WORKER_CORES = 4;

/** Whether the machine has a core to spare for the worker (see MIN_WORKER_CORES, IDLE_CORE_MARGIN). */
export function hasIdleCore(cores: number, load1: number): boolean {
  return cores >= MIN_WORKER_CORES && load1 <= cores - 2 + IDLE_CORE_MARGIN;
}

/** How long the worker outlives the last read in flight. */
export const WORKER_IDLE_MS = 200;
/** The worker's young generation, in MB: its heap holds a few documents' rows at a time. */
const WORKER_YOUNG_MB = 4;

/** What the main thread sends (in arrays: one message per tick): a document to read, with its checkpoint. */
export interface ReadRequest {
  readonly id: number;
  readonly source: Source;
  readonly checkpoint: SourceCheckpoint | undefined;
}

/** What the worker answers (in arrays): the observation without its source, or the error it threw. */
export type ReadReply =
  | { readonly id: number; readonly obs: Omit<Observation, "source">; readonly error?: undefined }
  | { readonly id: number; readonly error: string; readonly obs?: undefined };

/** Whether the next read goes to the worker (policy: see WORKER_MIN_IN_FLIGHT). */
export function useWorker(
  inFlight: number,
  running: boolean,
  disabled: boolean,
  minInFlight: number = WORKER_MIN_IN_FLIGHT,
): boolean {
  if (disabled) return false;
  return running || inFlight >= minInFlight;
}

/** The worker module next to this one: .ts when run from the sources, .js when built. */
export function workerUrl(here: string = import.meta.url): URL {
  return new URL(`./document-worker${extname(fileURLToPath(here))}`, here);
}

interface Waiting {
  readonly source: Source;
  readonly checkpoint: SourceCheckpoint | undefined;
  readonly resolve: (o: Observation) => void;
  readonly reject: (e: unknown) => void;
}

export interface BackgroundReaderStats {
  /** Documents read by the worker. */
  readonly inWorker: number;
  /** Documents read on the main thread (before the worker started, or without one). */
  readonly inThread: number;
  /** Workers started. */
  readonly started: number;
  /** Times a worker was wanted but not started: no core to spare (spareCore). */
  readonly gated: number;
  /** Why the worker is not used any more (it failed to start or died), if it is not. */
  readonly disabled: string | undefined;
}

/** Reads documents, in a worker thread while many are in flight. */
export class BackgroundReader {
  private worker: Worker | undefined;
  private disabled: string | undefined;
  /** Whether takeDisabledNotice has returned `disabled`. */
  private noticed = false;
  private readonly waiting = new Map<number, Waiting>();
  /** Requests of this tick, sent as one message (a message costs ~20 µs, a read ~60 µs). */
  private outbox: ReadRequest[] = [];
  private nextId = 0;
  private inFlight = 0;
  private idle: NodeJS.Timeout | undefined;
  private counts = { inWorker: 0, inThread: 0, started: 0, gated: 0 };
  private readonly url: URL;
  private readonly minInFlight: number;

  /** When the gate (spareCore) may be asked again after a no. */
  private gateAfterMs = 0;

  constructor(opts: { readonly url?: URL; readonly minInFlight?: number } = {}) {
    this.url = opts.url ?? workerUrl();
    this.minInFlight = opts.minInFlight ?? WORKER_MIN_IN_FLIGHT;
  }

  /** Whether this machine has a core to spare now (a method so tests can decide it). */
  spareCore(): boolean {
    return hasIdleCore(availableParallelism(), loadavg()[0] ?? 0);
  }

  /** collectIfChanged(source, checkpoint, collectDocument), here or in the worker. */
  collect(source: Source, checkpoint: SourceCheckpoint | undefined): Promise<Observation> {
    this.inFlight++;
    this.cancelIdle();
    const p = this.wantsWorker() ? this.viaWorker(source, checkpoint) : this.inThread(source, checkpoint);
    return p.finally(() => {
      if (--this.inFlight === 0) this.armIdle();
    });
  }

  /**
   * Why the worker stopped being used, once: the first call after it was disabled returns the
   * reason, later calls undefined (the adapter reports it as a problem of its next pass).
   */
  takeDisabledNotice(): string | undefined {
    if (this.disabled === undefined || this.noticed) return undefined;
    this.noticed = true;
    return this.disabled;
  }

  get stats(): BackgroundReaderStats {
    return { ...this.counts, disabled: this.disabled };
  }

  /** Whether a worker is running now. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** The worker's V8 heap snapshot (the privacy tests search it); undefined without a worker. */
  async heapSnapshot(): Promise<Buffer | undefined> {
    const w = this.worker;
    if (w === undefined) return undefined;
    // Counted in flight (no idle end) and referenced (no process exit) meanwhile: Node crashes
    // when the worker ends during its snapshot.
    this.inFlight++;
    this.cancelIdle();
    w.ref();
    try {
      const chunks: Buffer[] = [];
      for await (const c of await w.getHeapSnapshot()) chunks.push(Buffer.from(c as Uint8Array));
      return Buffer.concat(chunks);
    } finally {
      w.unref();
      if (--this.inFlight === 0) this.armIdle();
    }
  }

  /** Ends the worker now (its reads in flight are finished on this thread). */
  async close(): Promise<void> {
    this.cancelIdle();
    const w = this.worker;
    if (w === undefined) return;
    this.worker = undefined;
    this.handBack();
    await w.terminate();
  }

  private wantsWorker(): boolean {
    const running = this.worker !== undefined;
    if (!useWorker(this.inFlight, running, this.disabled !== undefined, this.minInFlight)) return false;
    return this.worker !== undefined || this.start();
  }

  private inThread(source: Source, checkpoint: SourceCheckpoint | undefined): Promise<Observation> {
    this.counts.inThread++;
    return collectIfChanged(source, checkpoint, collectDocument);
  }

  private viaWorker(source: Source, checkpoint: SourceCheckpoint | undefined): Promise<Observation> {
    const id = this.nextId++;
    return new Promise<Observation>((resolve, reject) => {
      this.waiting.set(id, { source, checkpoint, resolve, reject });
      if (this.outbox.length === 0) queueMicrotask(() => this.send());
      this.outbox.push({ id, source, checkpoint });
    });
  }

  private send(): void {
    const batch = this.outbox;
    this.outbox = [];
    // Gone meanwhile (closed or failed): handBack has taken these reads back already.
    if (this.worker !== undefined && batch.length > 0) this.worker.postMessage(batch);
  }

  private start(): boolean {
    const now = Date.now();
    if (now < this.gateAfterMs) return false;
    if (!this.spareCore()) {
      this.gateAfterMs = now + WORKER_GATE_MS;
      this.counts.gated++;
      return false;
    }
    let w: Worker;
    try {
      w = new Worker(this.url, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB } });
    } catch (e) {
      this.disabled = `the document worker did not start: ${String(e)}`;
      return false;
    }
    this.counts.started++;
    w.unref();
    w.on("message", (rs: readonly ReadReply[]) => {
      for (const r of rs) this.settle(r);
    });
    w.on("error", (e) => this.fail(w, `the document worker failed: ${String(e)}`));
    w.on("exit", (code) => this.fail(w, `the document worker exited (code ${code})`));
    this.worker = w;
    return true;
  }

  private settle(r: ReadReply): void {
    const job = this.waiting.get(r.id);
    if (job === undefined) return;
    this.waiting.delete(r.id);
    if (r.error !== undefined) job.reject(new Error(r.error));
    else {
      this.counts.inWorker++;
      job.resolve({ ...r.obs, source: job.source } as Observation);
    }
  }

  /** A worker that errs or exits while in use: never used again, its reads done here. */
  private fail(w: Worker, reason: string): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    this.disabled = reason;
    this.handBack();
  }

  private handBack(): void {
    const jobs = [...this.waiting.values()];
    this.waiting.clear();
    this.outbox = [];
    for (const j of jobs) this.inThread(j.source, j.checkpoint).then(j.resolve, j.reject);
  }

  private cancelIdle(): void {
    if (this.idle !== undefined) clearTimeout(this.idle);
    this.idle = undefined;
  }

  private armIdle(): void {
    if (this.worker === undefined) return;
    this.idle = setTimeout(() => {
      this.idle = undefined;
      if (this.inFlight === 0) void this.close();
    }, WORKER_IDLE_MS);
    this.idle.unref();
  }
}
