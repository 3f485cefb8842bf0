/**
 * Delivers the ledger's signal queue (src/ledger/signals/signals.ts) to one exporter, exactly once:
 * read a bounded batch after this exporter's watermark, export it, and on SUCCESS commit the
 * new watermark (compare-and-set on the one it was read from). Anything else leaves the
 * watermark where it was, so the next round sends the same records again. Rounds never overlap.
 *
 * The remaining at-least-once window is the one of the delta metrics (docs/design-export.md): a
 * crash between the backend's answer and the commit re-sends that batch; every record and span
 * carries Cline's ids (and spans deterministic ids), so a backend can collapse it.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { SignalBatch, SignalKind, SignalRow, Signals } from "../../ledger/signals/signals.ts";
import type { Logger } from "../../util/log.ts";
import { describeExportError, healthTransition } from "../delivery.ts";

/** The SDK's LogRecordExporter and SpanExporter have this shape. */
export interface RecordSink<T> {
  export(items: T[], resultCallback: (result: ExportResult) => void): void;
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface ShipperOptions<T> {
  /** `logs` or `traces`, for messages. */
  readonly signal: string;
  /** The ledger key of this destination's watermark. */
  readonly exporterKey: string;
  /** Names the destination in log lines (no credentials). */
  readonly target: string;
  readonly kinds: ReadonlySet<SignalKind>;
  readonly maxBatchSize: number;
  readonly quietMs: number;
  /** Event time from which records are sent on first enable (0 = all history). */
  readonly fromMs: number;
  /** Rows -> SDK records (rows of no record, such as turns for logs, give none). */
  readonly build: (rows: readonly SignalRow[], observedMs: number) => T[];
  readonly logger: Logger;
  readonly now?: () => number;
  /** An export that has not answered after this long counts as failed (its batch is re-sent). */
  readonly exportTimeoutMs?: number;
}

export type ShipOutcome =
  | { readonly ok: true; readonly sent: number }
  | { readonly ok: false; readonly reason: string };

export class SignalShipper<T> {
  private running: Promise<ShipOutcome> | undefined;
  private failing = false;
  private sealed = false;
  private readonly now: () => number;
  private sentTotal = 0;
  /** No batch starts at or after this time (a stop). */
  private stopAtMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly store: Signals,
    private readonly sink: RecordSink<T>,
    private readonly opts: ShipperOptions<T>,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Records delivered by this process (tests, logs). */
  get sent(): number {
    return this.sentTotal;
  }

  /**
   * One round: finalize what the quiet time ended, then send up to `maxBatches` batches. Rounds
   * never overlap: a round asked for while one runs starts after it (so a flush always drains).
   */
  ship(maxBatches: number): Promise<ShipOutcome> {
    const prev = this.running ?? Promise.resolve();
    const next = prev.then(() => this.round(maxBatches));
    this.running = next;
    void next.finally(() => {
      if (this.running === next) this.running = undefined;
    });
    return next;
  }

  /** The scheduled round: one batch, skipped while a round runs (a stuck export never piles up rounds). */
  tick(): void {
    if (this.running === undefined) void this.ship(1);
  }

  /** Whether records are queued beyond what was delivered. */
  backlog(): boolean {
    const c = this.store.cursor(this.opts.exporterKey, this.opts.fromMs);
    return this.store.pending(c.watermark);
  }

  /** No batch starts more than `ms` from now: a stop ends a long flush after its current batch. */
  stopWithin(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, this.now() + ms);
  }

  /** Nothing leaves after this (the final flush has been judged). */
  seal(): void {
    this.sealed = true;
  }

  async shutdown(): Promise<void> {
    this.sealed = true;
    await this.running;
    await this.sink.shutdown();
  }

  private async round(maxBatches: number): Promise<ShipOutcome> {
    if (this.sealed) return { ok: true, sent: 0 };
    let sent = 0;
    try {
      this.store.finalizeQuiet(this.now(), this.opts.quietMs);
      for (let i = 0; i < maxBatches && !this.sealed; i++) {
        if (this.now() >= this.stopAtMs) {
          if (this.backlog()) return this.failed("stopped before the backlog was delivered");
          break;
        }
        const cursor = this.store.cursor(this.opts.exporterKey, this.opts.fromMs);
        const batch = this.store.batch(cursor, this.opts.kinds, this.opts.maxBatchSize);
        if (batch.next === cursor.watermark) break; // nothing queued after it
        const records = this.opts.build(batch.rows, this.now());
        if (records.length > 0) {
          const result = await this.export(records);
          if (result.code !== ExportResultCode.SUCCESS) return this.failed(describeExportError(result.error));
        }
        this.commit(batch);
        sent += records.length;
      }
    } catch (e) {
      return this.failed(`cannot read the ledger: ${String(e)}`);
    }
    this.sentTotal += sent;
    const t = healthTransition(this.failing, true);
    this.failing = t.failing;
    if (t.event === "recovered")
      this.opts.logger.info(`${this.opts.signal} exports to ${this.opts.target} recovered`);
    return { ok: true, sent };
  }

  private commit(batch: SignalBatch): void {
    try {
      if (this.store.commit(batch, this.now()) === "stale") {
        this.opts.logger.debug(`${this.opts.signal} export to ${this.opts.target}: the watermark had moved`);
      }
    } catch (e) {
      // Delivered but not recorded: the next round sends it again (at-least-once, logged).
      this.opts.logger.error(
        `${this.opts.signal} export to ${this.opts.target} succeeded but the ledger could not record it: ${String(e)}`,
      );
    }
  }

  private failed(reason: string): ShipOutcome {
    const t = healthTransition(this.failing, false);
    this.failing = t.failing;
    if (t.event === "failing") {
      this.opts.logger.warn(
        `${this.opts.signal} exports to ${this.opts.target} are failing: ${reason}; nothing is lost, the ledger keeps them for the next export`,
      );
    }
    return { ok: false, reason };
  }

  private export(records: T[]): Promise<ExportResult> {
    const timeoutMs = this.opts.exportTimeoutMs ?? 60_000;
    return new Promise<ExportResult>((resolve) => {
      const timer = setTimeout(
        () =>
          resolve({ code: ExportResultCode.FAILED, error: new Error(`no answer within ${timeoutMs} ms`) }),
        timeoutMs,
      );
      timer.unref();
      const done = (r: ExportResult) => {
        clearTimeout(timer);
        resolve(r);
      };
      try {
        this.sink.export(records, done);
      } catch (e) {
        done({ code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) });
      }
    });
  }
}
