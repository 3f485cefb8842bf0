/**
 * Exactly-once bookkeeping between what a producer read from the ledger and what an
 * exporter delivered. A collection registers what it read (`PendingDelivery`) against the
 * ScopeMetrics object it returned; the MetricReader passes that same object to the exporter,
 * and the ledger's export state advances only when the export carrying it succeeded.
 */
import type { MetricData, ResourceMetrics, ScopeMetrics } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { ExportState, Ledger } from "../ledger/ledger.ts";
import type { PagedExport } from "./backfill.ts";

export interface PendingDelivery {
  /** What the ledger said was delivered when the collection started (compare-and-set base). */
  readonly base: ExportState;
  /** The export state to commit once a batch carrying this collection is delivered. */
  readonly next: ExportState;
  /**
   * Cumulative collections read in pages (src/export/pages.ts): the rest of the batch, read
   * and sent one request at a time after the collected part, each acknowledged page recorded
   * (src/export/backfill.ts); `next` commits only after all.
   */
  readonly pages?: PagedExport;
}

/**
 * One per exporter: the collections not yet delivered and how many exports are in flight.
 * A delta producer reads nothing while an export is in flight, so two windows can never
 * overlap (a late success of an abandoned export would otherwise deliver events twice).
 */
export class DeliveryTracker {
  private readonly pending = new WeakMap<ScopeMetrics, PendingDelivery>();
  private inFlight = 0;

  register(scope: ScopeMetrics, p: PendingDelivery): void {
    this.pending.set(scope, p);
  }

  /** The pending deliveries carried by a batch (each handed out once). */
  take(scopes: readonly ScopeMetrics[]): PendingDelivery[] {
    const out: PendingDelivery[] = [];
    for (const s of scopes) {
      const p = this.pending.get(s);
      if (p !== undefined) {
        this.pending.delete(s);
        out.push(p);
      }
    }
    return out;
  }

  begin(): void {
    this.inFlight++;
  }

  end(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  busy(): boolean {
    return this.inFlight > 0;
  }
}

export type CommitResult = "committed" | "stale";

/**
 * Records a delivered collection in the ledger, event, call, capture, compaction, final-call
 * (signal_queue seq of the tool calls counted by outcome) and edit watermarks in one
 * transaction. Delta: the watermarks move only if nobody moved them since the collection read
 * them (otherwise the delivered window overlapped a committed one and committing would skip
 * rows). Cumulative: the state only moves forward.
 */
export function commitDelivery(ledger: Ledger, p: PendingDelivery, temporality: Temporality): CommitResult {
  return ledger.transaction(() => {
    const cur = ledger.getExportState(p.next.exporter);
    if (temporality === "delta") {
      if (
        cur.eventWatermark !== p.base.eventWatermark ||
        cur.callWatermark !== p.base.callWatermark ||
        cur.captureWatermark !== p.base.captureWatermark ||
        (cur.compactionWatermark ?? 0) !== (p.base.compactionWatermark ?? 0) ||
        (cur.finalCallWatermark ?? 0) !== (p.base.finalCallWatermark ?? 0) ||
        (cur.editWatermark ?? 0) !== (p.base.editWatermark ?? 0) ||
        (cur.activityWatermark ?? 0) !== (p.base.activityWatermark ?? 0)
      )
        return "stale";
      ledger.putExportState({ ...p.next, lastSuccessMs: Math.max(cur.lastSuccessMs, p.next.lastSuccessMs) });
      return "committed";
    }
    ledger.putExportState({
      exporter: p.next.exporter,
      eventWatermark: Math.max(cur.eventWatermark, p.next.eventWatermark),
      callWatermark: Math.max(cur.callWatermark, p.next.callWatermark),
      captureWatermark: Math.max(cur.captureWatermark, p.next.captureWatermark),
      compactionWatermark: Math.max(cur.compactionWatermark ?? 0, p.next.compactionWatermark ?? 0),
      finalCallWatermark: Math.max(cur.finalCallWatermark ?? 0, p.next.finalCallWatermark ?? 0),
      editWatermark: Math.max(cur.editWatermark ?? 0, p.next.editWatermark ?? 0),
      activityWatermark: Math.max(cur.activityWatermark ?? 0, p.next.activityWatermark ?? 0),
      windowStartNs: cur.windowStartNs > p.next.windowStartNs ? cur.windowStartNs : p.next.windowStartNs,
      lastSuccessMs: Math.max(cur.lastSuccessMs, p.next.lastSuccessMs),
    });
    return "committed";
  });
}

/** A pull exporter served a scrape that arrived at `arrivalMs`: everything older was in it. */
export function commitScrape(ledger: Ledger, exporter: string, arrivalMs: number): void {
  const cur = ledger.getExportState(exporter);
  if (arrivalMs > cur.lastSuccessMs) ledger.putExportState({ ...cur, lastSuccessMs: arrivalMs });
}

/**
 * The destinations that still hold something due after a flush that raised no export error: a
 * delta backlog the drain could not move (exports answered but the windows were not committed,
 * or no window could be read). Something due and not delivered is a failure (`run --once` exits
 * 1), never "nothing to deliver".
 */
export function undeliveredBacklog(
  destinations: readonly { readonly name: string; readonly target: string; readonly backlog: boolean }[],
): { exporter: string; target: string; reason: string }[] {
  return destinations
    .filter((d) => d.backlog)
    .map((d) => ({
      exporter: d.name,
      target: d.target,
      reason:
        "events, tool calls (seen or final) or captures are still undelivered after the final export (no progress)",
    }));
}

export type HealthEvent = "failing" | "recovered" | undefined;

/**
 * Log-once policy for export health: an event only on a change of state, so a collector
 * that is down for an hour costs two log lines, not one per tick.
 */
export function healthTransition(failing: boolean, ok: boolean): { failing: boolean; event: HealthEvent } {
  if (ok) return { failing: false, event: failing ? "recovered" : undefined };
  return { failing: true, event: failing ? undefined : "failing" };
}

const MAX_REASON = 300;

/**
 * Why an export failed, for a log line. Built from the error's status code and message only:
 * never from request options, so header values (API keys) cannot appear.
 */
export function describeExportError(e: unknown): string {
  let text: string;
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    // A gRPC ServiceError: `code` is a gRPC status, its message "14 UNAVAILABLE: <details>".
    if (typeof code === "number" && "details" in e && "metadata" in e) text = `gRPC ${e.message}`;
    else if (typeof code === "number") text = `HTTP ${code}${e.message ? ` ${e.message}` : ""}`;
    else if (e.message === "Export failed with retryable status") {
      text = "the endpoint kept answering 429/502/503/504 (retried within the export timeout)";
    } else text = e.message || e.name;
  } else text = e === undefined ? "unknown error" : String(e);
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/**
 * Collectors cap request bodies (the OpenTelemetry Collector's HTTP receiver: 20 MiB by default),
 * and a cumulative export of a large ledger is far bigger. At ~250 bytes a point in protobuf and
 * ~550 in JSON (bench/export.ts), 10,000 points stay well under that with long attribute values.
 */
export const MAX_POINTS_PER_REQUEST = 10_000;

/**
 * Splits a batch into requests of at most `max` data points, keeping resource, scopes and metric
 * descriptors. Used for cumulative exports only: re-sending a delivered cumulative chunk is
 * harmless, while a partially delivered delta window could not be retried without doubling.
 */
export function splitByPoints(rm: ResourceMetrics, max: number): ResourceMetrics[] {
  if (!Number.isInteger(max) || max <= 0)
    throw new Error(`max points per request must be a positive integer: ${max}`);
  const out: ResourceMetrics[] = [];
  let scopes: ScopeMetrics[] = [];
  let room = max;
  const flush = () => {
    if (scopes.length > 0) out.push({ resource: rm.resource, scopeMetrics: scopes });
    scopes = [];
    room = max;
  };
  for (const sm of rm.scopeMetrics) {
    let current: ScopeMetrics | undefined;
    for (const m of sm.metrics) {
      const points = m.dataPoints as readonly unknown[];
      let offset = 0;
      do {
        if (room === 0) {
          flush();
          current = undefined;
        }
        const take = Math.min(room, points.length - offset);
        if (current === undefined) {
          current = { scope: sm.scope, metrics: [] };
          scopes.push(current);
        }
        current.metrics.push({ ...m, dataPoints: points.slice(offset, offset + take) } as MetricData);
        offset += take;
        room -= take;
      } while (offset < points.length);
    }
  }
  flush();
  return out;
}
