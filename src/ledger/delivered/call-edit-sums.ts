/**
 * An edit kept exactly once by its call's row (schema v8, tables/edit-call-sums-v8.ts): a call's
 * `edit_sums` holds the sums of its stored edits and their places (`n` of `<call key>|<n>`); an edit
 * is new when its place is not there. Policy only: ingest.ts reads and writes the column in the
 * commit transaction of the edits' document. Generic: any adapter's edit keys are `<call key>|<n>`.
 */
import type { EditRecord } from "../../adapter/types.ts";
import { CALL_EDIT_SUMS } from "../tables/edit-call-sums-v8.ts";
import { invalidEdit } from "./edits.ts";

/** A call's stored edits: what its execute_tool span reports, and which edits they are. */
export interface CallEditSums {
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /** 0 when any of them is inexact. */
  readonly exact: 0 | 1;
  readonly accepted: number;
  readonly rejected: number;
  readonly failed: number;
  /** The edits' places, each the digits after `<call key>|` (a string: `01` and `1` are two edits). */
  readonly places: readonly string[];
}

/** An edit's place in its call: its key's digits after the call key and `|` (invalidEdit checked the form). */
export const placeOf = (e: EditRecord): string => e.editKey.slice(e.callKey.length + 1);

/**
 * The edits of one call (`edits`, in their order) that are not stored yet, neither in `stored` nor
 * earlier in the list (the first of two equal keys wins, as the read before it did), and the call's
 * sums with them added; `fresh` is empty when nothing is new (then `sums` is `stored`'s).
 */
export function addCallEdits(
  stored: CallEditSums | undefined,
  edits: readonly EditRecord[],
): { readonly fresh: EditRecord[]; readonly sums: CallEditSums | undefined } {
  const places = new Set(stored?.places);
  const fresh: EditRecord[] = [];
  let linesAdded = stored?.linesAdded ?? 0;
  let linesRemoved = stored?.linesRemoved ?? 0;
  let exact: 0 | 1 = stored?.exact ?? 1;
  let accepted = stored?.accepted ?? 0;
  let rejected = stored?.rejected ?? 0;
  let failed = stored?.failed ?? 0;
  for (const e of edits) {
    const place = placeOf(e);
    if (places.has(place)) continue;
    places.add(place);
    fresh.push(e);
    linesAdded += e.linesAdded;
    linesRemoved += e.linesRemoved;
    if (!e.exact) exact = 0;
    if (e.decision === "accepted") accepted++;
    else if (e.decision === "rejected") rejected++;
    else failed++;
  }
  if (fresh.length === 0) return { fresh, sums: stored };
  return {
    fresh,
    sums: { linesAdded, linesRemoved, exact, accepted, rejected, failed, places: [...places] },
  };
}

/** `edit_sums` as stored: a JSON array in CALL_EDIT_SUMS' order. */
export function encodeCallEditSums(s: CallEditSums): string {
  return JSON.stringify([s.linesAdded, s.linesRemoved, s.exact, s.accepted, s.rejected, s.failed, s.places]);
}

/** A stored `edit_sums` read back; throws on a value this build did not write (a damaged ledger). */
export function decodeCallEditSums(json: string): CallEditSums {
  const a = JSON.parse(json) as unknown;
  const n = (i: number): number => {
    const v = Array.isArray(a) ? a[i] : undefined;
    if (!Number.isSafeInteger(v) || (v as number) < 0)
      throw new Error(`tool_calls.edit_sums ${json}: ${CALL_EDIT_SUMS[i]} is not a count`);
    return v as number;
  };
  const places = Array.isArray(a) ? a[6] : undefined;
  if (!Array.isArray(places) || !places.every((p) => typeof p === "string" && /^\d+$/.test(p)))
    throw new Error(`tool_calls.edit_sums ${json}: places is not a list of digit strings`);
  const exact = n(2);
  if (exact > 1) throw new Error(`tool_calls.edit_sums ${json}: exact is not 0 or 1`);
  return {
    linesAdded: n(0),
    linesRemoved: n(1),
    exact: exact as 0 | 1,
    accepted: n(3),
    rejected: n(4),
    failed: n(5),
    places: places as string[],
  };
}

/**
 * The valid edits of an observation by their call key, each call's in the order read; an invalid
 * one (an adapter's bug: invalidEdit) is reported in `invalid`, not stored.
 */
export function validEditsByCall(
  edits: readonly EditRecord[] | undefined,
  invalid: { editKey: string; reason: string }[],
): Map<string, EditRecord[]> | undefined {
  if (edits === undefined) return undefined;
  const byCall = new Map<string, EditRecord[]>();
  for (const e of edits) {
    const reason = invalidEdit(e);
    if (reason !== undefined) {
      invalid.push({ editKey: e.editKey, reason });
      continue;
    }
    const list = byCall.get(e.callKey);
    if (list === undefined) byCall.set(e.callKey, [e]);
    else list.push(e);
  }
  return byCall;
}
