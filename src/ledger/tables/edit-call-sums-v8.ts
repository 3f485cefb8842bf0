/**
 * Schema v8, one self-contained step (issue 29's cold backfill): an edit is kept exactly once by its
 * CALL's row, not by a row of its own.
 *
 * - `tool_calls.edit_sums`: per call, what its stored edits sum to and which they are, as one JSON
 *   array (CALL_EDIT_SUMS' order: lines added, lines removed, exact (the least), edits accepted,
 *   rejected and failed, then the list of the edits' places `n`, each the digits of its key
 *   `<call key>|<n>` as a string); NULL: no edit of the call is stored. An edit key is its call key,
 *   `|`, digits (Edits `invalidEdit`), so (call, n) is the edit's identity and the list is its
 *   exactly-once: a commit stores an edit only if its `n` is not in its call's list, and adds it
 *   there in the same transaction (src/ledger/delivered/call-edit-sums.ts). The first six are what
 *   a call's execute_tool span reports (src/ledger/signals/watermarks.ts), read with the call's row.
 * - `edit_keys` is dropped: a row per edit (18,000 for 2,000 tasks) cost the cold backfill ~95 ms of
 *   CPU for ~5 % of its ledger (docs/performance.md "An edit kept once by its call"); the sums ride on a
 *   row the call writes anyway, bound in its INSERT when the call is new (a cold backfill: always).
 * - The upgrade sums each call's `edit_keys` rows into its `edit_sums`, in the upgrade's transaction
 *   (src/ledger/migrate.ts); an edit whose call has no row (no adapter writes one: the edit is read
 *   from its call) keeps its pack, and a later read of it is refused as an edit without its call.
 */

import { callKeyOfSql } from "./edits-narrow-v5.ts";

/** The elements of `tool_calls.edit_sums`, in order. */
export const CALL_EDIT_SUMS = [
  "lines_added",
  "lines_removed",
  "exact",
  "accepted",
  "rejected",
  "failed",
  "places",
] as const;

/** The schema version that keeps an edit once by its call (this step). */
export const EDIT_CALL_SUMS_VERSION = 8;

/** An edit key's place (its digits after `<call key>|`): what callKeyOfSql leaves off, less the `|`. */
const PLACE = "substr(edit_key, length(rtrim(edit_key, '0123456789')) + 1)";
const CALL = callKeyOfSql("edit_key");

export const EDIT_CALL_SUMS_V8 = `
  ALTER TABLE tool_calls ADD COLUMN edit_sums TEXT;
  UPDATE tool_calls SET edit_sums = s.sums
    FROM (SELECT ${CALL} AS call_key,
            json_array(SUM(lines_added), SUM(lines_removed), MIN(exact), SUM(decision = 'accepted'),
              SUM(decision = 'rejected'), SUM(decision = 'failed'), json_group_array(${PLACE})) AS sums
          FROM edit_keys GROUP BY 1) s
    WHERE tool_calls.call_key = s.call_key;
  DROP TABLE edit_keys;
`;
