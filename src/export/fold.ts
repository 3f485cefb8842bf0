/**
 * Series rows -> one point per attribute set, shared by the counters and histograms built from
 * ledger series (compactions, captures, GenAI). Rows that coincide once an attribute is dropped
 * (`session.id` off, project `none`) become one point: the first row starts it, the others are
 * merged into it, and the point keeps the newest liveness times of its rows (`isLive`).
 */
import { type Attrs, seriesKey } from "./attributes.ts";

/** The liveness times every point carries (translate.ts `isLive`). */
export interface PointTimes {
  updatedMs: number;
  lastEventMs: number;
}

/** A point keyed by its attributes alone (`seriesKey`). */
export function keyedByAttributes<A extends Attrs>(attributes: A): { key: string; attributes: A } {
  return { key: seriesKey(attributes), attributes };
}

export function foldPoints<R extends Readonly<PointTimes>, A, P extends PointTimes>(
  rows: readonly R[],
  /** The row's point key and attributes; undefined: the row adds nothing (skipped). */
  keyOf: (row: R) => { readonly key: string; readonly attributes: A } | undefined,
  start: (row: R, attributes: A) => P,
  /** Adds the row's counts to the point (its times are combined here). */
  merge: (into: P, row: R) => void,
): P[] {
  const byKey = new Map<string, P>();
  for (const row of rows) {
    const k = keyOf(row);
    if (k === undefined) continue;
    const prev = byKey.get(k.key);
    if (prev === undefined) {
      byKey.set(k.key, start(row, k.attributes));
      continue;
    }
    merge(prev, row);
    prev.updatedMs = Math.max(prev.updatedMs, row.updatedMs);
    prev.lastEventMs = Math.max(prev.lastEventMs, row.lastEventMs);
  }
  return [...byKey.values()];
}
