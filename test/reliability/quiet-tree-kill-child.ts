/**
 * One `report`-like pass (runPass, the CLI adapter over the ledger's listings, a clock 20 s ahead so
 * listings and index marks are confirmed) that kills itself with SIGKILL at `dieAt`:
 *   checkpoint      inside the commit transaction, when the ledger stores a checkpoint;
 *   after-commit    right after the first commit transaction returned;
 *   snapshot        inside the transaction that writes the quiet-tree snapshot;
 *   after-snapshot  right after the snapshot was written;
 *   never           not at all.
 * A TEMP trigger (this connection only, never in the ledger file) calls a JS function.
 * argv: <home> <stateDir> <dieAt> [passes]. `passes` (default 1) runs that many passes one after
 * another, each with the ledger opened afresh and a new adapter, as separate `report`s would (one
 * process saves a tsx start-up per pass: CI time); only the last can die. Prints each pass's result
 * as a JSON line.
 */
import type Database from "better-sqlite3";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { QUIET_TREE_SCOPE } from "../../src/adapter/cline/quiet-tree.ts";
import type { ListingStore } from "../../src/adapter/listings.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";

const [home, stateDir, lastDieAt, count] = process.argv.slice(2) as [string, string, string, string?];
const passes = Number(count ?? "1");
const die = (): void => {
  process.kill(process.pid, "SIGKILL");
};

async function onePass(dieAt: string): Promise<void> {
  const ledger = Ledger.open(stateDir);
  const db = (ledger as unknown as { db: Database.Database }).db;
  db.function("cline_otel_test_die", () => {
    die();
    return null;
  });
  if (dieAt === "checkpoint") {
    for (const op of ["INSERT", "UPDATE"])
      db.exec(
        `CREATE TEMP TRIGGER die_${op} AFTER ${op} ON main.checkpoints BEGIN SELECT cline_otel_test_die(); END`,
      );
  }
  if (dieAt === "snapshot") {
    for (const op of ["INSERT", "UPDATE"])
      db.exec(
        `CREATE TEMP TRIGGER die_${op} AFTER ${op} ON main.listings WHEN NEW.scope = '${QUIET_TREE_SCOPE}'
         BEGIN SELECT cline_otel_test_die(); END`,
      );
  }
  if (dieAt === "after-commit") {
    const commitAll = ledger.commitAll.bind(ledger);
    ledger.commitAll = (obs) => {
      const r = commitAll(obs);
      die();
      return r;
    };
  }
  const store = ledger.listings as ListingStore;
  const listings: ListingStore = {
    load: (scope) => store.load(scope),
    loadOne: (scope, path) => store.loadOne?.(scope, path),
    save: (scope, put, drop) => {
      store.save(scope, put, drop);
      if (dieAt === "after-snapshot" && scope === QUIET_TREE_SCOPE && put.size > 0) die();
    },
  };
  const later = () => Date.now() + 20_000;
  const adapter = createClineAdapter(resolveClinePaths({}, {}, home), undefined, listings, later);
  const r = await runPass(adapter, ledger);
  ledger.close();
  process.stdout.write(`${JSON.stringify({ read: r.read, unchanged: r.unchanged, sources: r.sources })}\n`);
}

for (let i = 1; i <= passes; i++) await onePass(i === passes ? lastDieAt : "never");
