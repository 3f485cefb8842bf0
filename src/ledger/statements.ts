import type Database from "better-sqlite3";

/** The prepared statements of one group of tables (captures, compactions). */
export interface VersionedStatements<R, W> {
  /** Undefined on a read-only view of a ledger older than the version that added the tables. */
  readonly reads: R | undefined;
  /** Prepared on first use: only a writer writes, and a writer is always at this build's schema. */
  readonly writes: () => W;
}

/**
 * Reads prepared at open when the ledger has the tables (schema version >= `since`), writes on
 * first use, so a read-only `report` over an older ledger neither fails nor prepares them.
 */
export function versionedStatements<R, W>(
  db: Database.Database,
  version: number,
  since: number,
  prepareReads: (db: Database.Database, version: number) => R,
  prepareWrites: (db: Database.Database) => W,
): VersionedStatements<R, W> {
  let w: W | undefined;
  return {
    reads: version >= since ? prepareReads(db, version) : undefined,
    writes: () => {
      w ??= prepareWrites(db);
      return w;
    },
  };
}

/** Schema version from which every series table has `client` in its key (tables/client-v2.ts). */
export const CLIENT_VERSION = 2;

/**
 * The `client` column, or '' on a read-only view of a ledger from before CLIENT_VERSION, so an
 * older ledger's report still reads (its series have no client).
 */
export function clientColumn(version: number): string {
  return version >= CLIENT_VERSION ? "client" : "''";
}
