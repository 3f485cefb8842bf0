/**
 * Schema v5, one self-contained step (issue 29's cost: the cold backfill): an edit row without the
 * two keys it repeats, and without the index of one of them.
 *
 * - `call_key` goes with its index `edits_call`: an edit's key is always its call's key, `|`, and its
 *   number (`<call_key>|<n>`, both adapters; Edits.insert refuses any other), so the call key is the
 *   edit key without its last part (EDIT_CALL_KEY_SQL), and a call's edits are the range of the
 *   unique `edit_key` index from `<call_key>|` (the signal batch's per-call sums,
 *   src/ledger/signals/watermarks.ts). One text index fewer per edit INSERT.
 * - `usage_key` goes: nothing reads it (an edit's request is its call's, by the call key).
 *
 * ~140 bytes and an index entry less per edit (on 10,000 tasks, 90,000 edits: ~20 MB fewer pages
 * written and checkpointed by the backfill's commits). DROP COLUMN rewrites the table once, in the
 * upgrade's transaction (migrate.ts); no row, id or signal seq changes.
 */
export const EDITS_NARROW_V5 = `
  DROP INDEX edits_call;
  ALTER TABLE edits DROP COLUMN call_key;
  ALTER TABLE edits DROP COLUMN usage_key;
`;

/**
 * The call key of an edits row (alias `a`) as SQL: its `edit_key` without the last `|<n>` (rtrim
 * drops the digits of n, substr the `|`). The column of schemas before v5, derived.
 */
export const editCallKeySql = (a: string): string => callKeyOfSql(`${a}.edit_key`);

/** callKeyOfSql in JavaScript: an edit key without its last `|<n>` (the rule Edits.insertAll's keys keep). */
export const callKeyOf = (editKey: string): string =>
  editKey.slice(0, editKey.replace(/\d+$/, "").length - 1);

/** The call key of an edit key given as an SQL expression (evaluated twice: keep it cheap). */
export const callKeyOfSql = (key: string): string =>
  `substr(${key}, 1, length(rtrim(${key}, '0123456789')) - 1)`;
