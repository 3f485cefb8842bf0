/**
 * A document with file edits for the ledger's edit tests (schema v6 packs, v8 sums by call): a paid
 * request and two calls, one's key the other's + `|7` (a call key that merely starts with another's),
 * with edits of every decision.
 */
import type { EditRecord, Source } from "../../src/adapter/types.ts";
import { call, edit, event, finalObservation, withEdits } from "./events.ts";

export const T0 = 1_796_000_000_000;

export const src = (path: string): Source => ({ adapterId: "cline", path, origin: "walk", hint: {} });

/** Document d: four edits of every decision on its two calls, and `extra` more on the second. */
export function editDoc(d: number, extra = 0) {
  const paid = event(`m${d}`, { toolCallCount: 2, timestampMs: T0 + d * 1000, client: "cli" });
  const a = call(`c${d}`, paid.dedupKey, 2, { timestampMs: T0 + d * 1000, toolUseId: `toolu_a${d}` });
  const b = call(`c${d}|7`, paid.dedupKey, 2, { timestampMs: T0 + d * 1000 + 1, toolUseId: `toolu_b${d}` });
  const edits: EditRecord[] = [
    edit(a, { linesAdded: 5 + d, linesRemoved: 1 }, 0),
    edit(a, { linesAdded: 2, linesRemoved: 9, decision: "rejected", source: "user" }, 1),
    edit(a, { linesAdded: 1, linesRemoved: 0, exact: false, decision: "failed", language: "python" }, 12),
    edit(b, { linesAdded: 40 + d, linesRemoved: 3, operation: "create", model: "m2" }, 0),
  ];
  for (let n = 0; n < extra; n++) edits.push(edit(b, { linesAdded: 100 + n, linesRemoved: 0 }, 20 + n));
  return withEdits(finalObservation([paid], [a, b], 100 + d + extra, src(`/s/d${d}.messages.json`)), edits);
}
