/**
 * Deterministic trace and span ids from Cline's ids, so a span re-sent after a crash is the
 * same span to a backend (and the events carry the ids of their spans). SHA-256 truncated:
 * 128 bits for a trace (one per root session), 64 for a span (its request, call or turn key).
 */
import { createHash } from "node:crypto";
import type { HrTime } from "@opentelemetry/api";

function digest(domain: string, id: string, hexChars: number): string {
  const hex = createHash("sha256").update(domain).update("\u0000").update(id, "utf8").digest("hex");
  const out = hex.slice(0, hexChars);
  // An all-zero id is invalid in OTLP; 2^-64 at worst, but never emitted.
  return /^0+$/.test(out) ? `${out.slice(0, -1)}1` : out;
}

/** The trace of a root session: its lead, sub-agents and teammates. */
export function traceIdOf(rootSessionId: string): string {
  return digest("cline-otel.trace", rootSessionId, 32);
}

/** The span of a request (dedup key), a tool call (call key) or a turn (turn key). */
export function spanIdOf(key: string): string {
  return digest("cline-otel.span", key, 16);
}

/** Unix milliseconds as an OpenTelemetry HrTime. */
export function hrTime(ms: number): HrTime {
  const t = Math.max(0, Math.trunc(ms));
  return [Math.floor(t / 1000), (t % 1000) * 1_000_000];
}
