import { existsSync } from "node:fs";
import { Command } from "commander";
import { createClineAdapter } from "../adapter/cline/adapter.ts";
import { readSessionIndex } from "../adapter/cline/index-db.ts";
import { configFrom, noClineDataMessage, withGlobalOptions } from "./common.ts";

export function pathsCommand(): Command {
  const cmd = new Command("paths")
    .description("show the resolved Cline directories, where each came from, and what discovery finds")
    .option("--json", "print JSON");
  withGlobalOptions(cmd);
  cmd.action(async (opts: { json?: boolean }) => {
    const config = configFrom(cmd);
    const c = config.cline;
    const dirs = { root: c.root, data: c.data, sessions: c.sessions, db: c.db, state: config.stateDir };
    const { sources, problems } = await createClineAdapter(c).discover();
    const index = readSessionIndex(c.db.path);
    const found = {
      documents: sources.length,
      fromIndex: sources.filter((s) => s.origin === "index").length,
      fromWalk: sources.filter((s) => s.origin === "walk").length,
      index: {
        status: index.status,
        rows: index.rows.length,
        strategy: index.strategy,
        problem: index.problem,
      },
      problems: problems.length,
    };
    if (opts.json) {
      const out = Object.fromEntries(
        Object.entries(dirs).map(([k, v]) => [k, { ...v, exists: existsSync(v.path) }]),
      );
      process.stdout.write(`${JSON.stringify({ ...out, discovery: found })}\n`);
      return;
    }
    const w = Math.max(...Object.values(dirs).map((d) => d.path.length));
    for (const [name, d] of Object.entries(dirs)) {
      const exists = existsSync(d.path) ? "exists " : "missing";
      process.stdout.write(`${name.padEnd(9)}${d.path.padEnd(w)}  ${exists}  ${d.origin} (${d.via})\n`);
    }
    process.stdout.write(
      `\ndiscovery: ${found.documents} message documents (${found.fromIndex} named by the index, ${found.fromWalk} found by the walk)\n` +
        `index:     ${index.status}, ${index.rows.length} rows${index.problem ? ` — ${index.problem}` : ""}\n`,
    );
    const missing = noClineDataMessage(config);
    if (missing !== undefined) process.stdout.write(`\n${missing}\n`);
  });
  return cmd;
}
