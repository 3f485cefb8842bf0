/**
 * Schema v7, one self-contained step (issue 29's and issue 30's cold backfill): the running series of
 * the edits and the activity (`edit_series`, `activity_series`) are no longer upserted by every
 * commit; they are folded from their records when an exporter is about to read them.
 *
 * - `series_folds`: per series table, the highest record id already summed into it (`through_id`:
 *   a pack id of `edit_packs`, a row id of `activity`). Both tables' ids only grow (a new pack is
 *   MAX(id) + 1, an activity row an INTEGER PRIMARY KEY with no row ever deleted), so the records
 *   after it are exactly those not summed yet. A fold (src/ledger/delivered/series-store.ts) sums the
 *   records of (through_id, MAX(id)] into their series, the delta exporter's own aggregate of an id
 *   window, and moves `through_id` in the same transaction: a crash before its COMMIT folds nothing,
 *   after it everything, and a second fold finds nothing new.
 * - Why: a cold `report` (which reads the report's rollup, never these series) paid one upsert per
 *   series per commit, a series per session, edit and activity kind: ~14,000 upserts and their pages for
 *   2,000 tasks (docs/performance.md "The delivered series folded at export"). A daemon pays the same
 *   sums once, in one INSERT ... SELECT per table at its next cumulative export; a delta exporter
 *   never reads them.
 * - The upgrade: a v6 ledger's series are current (its build upserted them at every commit), so
 *   `through_id` starts at each table's highest id; a new ledger's at 0. It runs in the upgrade's
 *   transaction (src/ledger/migrate.ts).
 */
export const SERIES_FOLDS_V7 = `
  CREATE TABLE series_folds (
    name       TEXT PRIMARY KEY CHECK (name IN ('edit', 'activity')),
    through_id INTEGER NOT NULL CHECK (through_id >= 0)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO series_folds (name, through_id) VALUES
    ('edit', (SELECT IFNULL(MAX(id), 0) FROM edit_packs)),
    ('activity', (SELECT IFNULL(MAX(id), 0) FROM activity));
`;
