import { ACTIVITY_V3 } from "./tables/activity-v3.ts";
import { CAPTURE_TABLES } from "./tables/captures.ts";
import { CLIENT_SERIES_V2 } from "./tables/client-v2.ts";
import { EDIT_CALL_SUMS_V8 } from "./tables/edit-call-sums-v8.ts";
import { EDIT_PACKS_V6 } from "./tables/edit-packs-v6.ts";
import { EDITS_NARROW_V5 } from "./tables/edits-narrow-v5.ts";
import { EDITS_V3 } from "./tables/edits-v3.ts";
import { EXPORT_BACKFILL_ACTIVITY_V9 } from "./tables/export-backfill-activity-v9.ts";
import { GENAI_TABLES } from "./tables/genai.ts";
import { REJECTED_OUTCOME_V3 } from "./tables/rejected-v3.ts";
import { REPORT_ROLLUP_DELIVERED_V4 } from "./tables/report-rollup-delivered-v4.ts";
import { REPORT_ROLLUP_V3 } from "./tables/report-rollup-v3.ts";
import { SERIES_FOLDS_V7 } from "./tables/series-folds-v7.ts";
import { SIGNAL_TABLES } from "./tables/signals.ts";
import { EXPORT_BACKFILL_KEY_V2, STATE_TABLES } from "./tables/state.ts";
import { USAGE_TABLES } from "./tables/usage.ts";

/**
 * The ledger schema, versioned with PRAGMA user_version. MIGRATIONS[0] is the baseline (v1): every
 * table and index, one file per table family under tables/. Each later entry migrates from
 * version i to i+1 (append one for the next change; src/ledger/migrate.ts applies them in one
 * transaction). A ledger newer than this build is refused, never downgraded; one written by an
 * older, unreleased build (no LEDGER_APPLICATION_ID) is refused with the `mv` that starts anew.
 */
export const MIGRATIONS: readonly string[] = [
  // v1: the baseline
  [STATE_TABLES, USAGE_TABLES, CAPTURE_TABLES, SIGNAL_TABLES, GENAI_TABLES].join("\n"),
  // v2, one step: cline.client in every series key (tables/client-v2.ts), and the position of a
  // cumulative pass over folded series (session id off: the default; tables/state.ts)
  [CLIENT_SERIES_V2, EXPORT_BACKFILL_KEY_V2].join("\n"),
  // v3, one step: the outcome 'rejected' (a call the user denied) allowed in every outcome column
  // (tables/rejected-v3.ts); the report's rollup, kept at insert time (tables/report-rollup-v3.ts);
  // the file edits and their series, an edit watermark per exporter (tables/edits-v3.ts); active
  // time, commits, pull requests and session starts, an activity watermark per exporter
  // (tables/activity-v3.ts)
  [REJECTED_OUTCOME_V3, REPORT_ROLLUP_V3, EDITS_V3, ACTIVITY_V3].join("\n"),
  // v4, one step: what Cline delivered (lines, edit decisions, active time, commits, pull requests)
  // in the report's rollup, kept at insert time and filled from a v3 ledger's rows
  // (tables/report-rollup-delivered-v4.ts)
  REPORT_ROLLUP_DELIVERED_V4,
  // v5, one step: an edit row without its call key (the edit key's prefix) and its index, and
  // without its unread usage key (tables/edits-narrow-v5.ts)
  EDITS_NARROW_V5,
  // v6, one step: the edits a commit adds for one document as one row (a pack), each edit's key kept
  // apart for exactly once and for its call's sums; `edits` a view of them (tables/edit-packs-v6.ts)
  EDIT_PACKS_V6,
  // v7, one step: the edits' and activity's series folded from their records when an exporter reads
  // them, not upserted by every commit; the point each is folded through (tables/series-folds-v7.ts)
  SERIES_FOLDS_V7,
  // v8, one step: an edit kept once by its call's row (the sums and places of its stored edits in
  // tool_calls.edit_sums), not by an edit_keys row of its own (tables/edit-call-sums-v8.ts)
  EDIT_CALL_SUMS_V8,
  // v9, one step: the activity series read in pages by a cumulative export (the `activity` phase of
  // export_backfill) and a pass's activity watermark kept with it (tables/export-backfill-activity-v9.ts)
  EXPORT_BACKFILL_ACTIVITY_V9,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * PRAGMA application_id of a ledger created from the baseline ("CLOT"). Builds before the
 * baseline numbered their own schemas 1..16 in user_version and left this 0, so it is what tells
 * this baseline's v1 from theirs.
 */
export const LEDGER_APPLICATION_ID = 0x434c4f54;

/**
 * Explicit histogram bounds (inclusive upper bounds, OpenTelemetry semantics) of the capture
 * metrics. They are persisted as bucket indexes in `captures` and `capture_buckets`, so they
 * can change only together with a migration that re-buckets those rows.
 */
export const CAPTURE_PAYLOAD_BOUNDARIES: readonly number[] = Object.freeze([
  4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608,
]);
export const CAPTURE_TOKEN_BOUNDARIES: readonly number[] = Object.freeze([
  1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 512000, 1024000, 2048000,
]);

/** Index of the bucket holding `value`: the first bound >= value, or one past the last bound. */
export function bucketIndex(value: number, boundaries: readonly number[]): number {
  let lo = 0;
  let hi = boundaries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (value <= (boundaries[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
