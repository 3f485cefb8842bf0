/**
 * One collection pass (runPass, the CLI adapter) into the ledger of a state dir, that kills
 * itself with SIGKILL the moment the ledger stores its `dieAt`-th checkpoint: inside a commit
 * transaction, after the documents before it in the same batch wrote their rows. A TEMP trigger
 * (this connection only, never in the ledger file) calls a JS function; 0 = never die.
 * argv: <clineDir> <stateDir> <dieAt> [quietMs]. Prints the pass result as JSON when it lives.
 * With a quiet time, the documents (all quiet) are final as they are read (Signals.record).
 */
import type Database from "better-sqlite3";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";

const [clineDir, stateDir, dieAtArg, quietArg] = process.argv.slice(2) as [string, string, string, string?];
const dieAt = Number(dieAtArg);
const ledger = Ledger.open(stateDir, quietArg === undefined ? {} : { quietMs: Number(quietArg) });
const db = (ledger as unknown as { db: Database.Database }).db;
let stored = 0;
db.function("cline_otel_test_checkpoint", () => {
  stored++;
  if (stored === dieAt) process.kill(process.pid, "SIGKILL");
  return null;
});
db.exec(
  "CREATE TEMP TRIGGER die_mid_batch AFTER INSERT ON main.checkpoints BEGIN SELECT cline_otel_test_checkpoint(); END",
);
const adapter = createClineAdapter(resolveClinePaths({ clineDir }, {}, clineDir, clineDir));
const r = await runPass(adapter, ledger);
ledger.close();
process.stdout.write(`${JSON.stringify({ read: r.read, eventsAdded: r.eventsAdded, failed: r.failed })}\n`);
