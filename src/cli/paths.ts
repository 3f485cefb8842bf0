import { existsSync } from "node:fs";
import { Command } from "commander";
import { localConfigFrom, withGlobalOptions } from "./common.ts";
import { noClineDataMessage } from "./no-data.ts";

export function pathsCommand(): Command {
  const cmd = new Command("paths")
    .description("show the resolved Cline directories, where each came from, and what discovery finds")
    .option("--json", "print JSON")
    .option(
      "--capture-dir <dir>",
      "also look for provider-request captures here, as `run` and `report` would (default: $CLINE_OTEL_CAPTURE_DIR)",
    );
  withGlobalOptions(cmd);
  cmd.action(async (opts: { json?: boolean }) => {
    const config = localConfigFrom(cmd);
    // Discovery only (no reader, parser or compaction code): loaded here so that `--version` and
    // `--help` load none of it.
    const [{ discoverCline }, { listCaptureFiles }, { cachedIndexReader }, { taskFolderCount }] =
      await Promise.all([
        import("../adapter/cline/discover.ts"),
        import("../adapter/cline/captures/discover.ts"),
        import("../adapter/cline/index-db.ts"),
        import("../adapter/cline-tasks/discover.ts"),
      ]);
    const c = config.cline;
    const dirs = { root: c.root, data: c.data, sessions: c.sessions, db: c.db, state: config.stateDir };
    // One reader: discovery's read of the index is the one shown below (read once). The message
    // documents only: the compaction files next to them are not message documents.
    const readIndex = cachedIndexReader();
    const { sources, problems } = await discoverCline(c, readIndex);
    const index = await readIndex(c.db.path);
    // Listing only (names, no file is opened): what the captures surface would read.
    const captureListing = listCaptureFiles(config.captureDirs);
    const captureDirs = config.captureDirs.map((d) => ({ ...d, exists: existsSync(d.path) }));
    // The task format's roots: every candidate, whether it exists, what found it (listing only).
    const taskRoots = config.taskRoots.map((r) => {
      const tasks = taskFolderCount(r);
      return { ...r, exists: tasks !== undefined, tasks: tasks ?? 0 };
    });
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
      captureFiles: captureListing.sources.length,
      problems: problems.length + captureListing.problems.length,
    };
    if (opts.json) {
      const out = Object.fromEntries(
        Object.entries(dirs).map(([k, v]) => [k, { ...v, exists: existsSync(v.path) }]),
      );
      process.stdout.write(
        `${JSON.stringify({ ...out, captures: captureDirs, taskRoots, discovery: found })}\n`,
      );
      return;
    }
    const w = Math.max(...[...Object.values(dirs), ...captureDirs].map((d) => d.path.length));
    const line = (name: string, d: { path: string; origin: string; via: string }, exists: boolean) =>
      `${name.padEnd(9)}${d.path.padEnd(w)}  ${exists ? "exists " : "missing"}  ${d.origin} (${d.via})\n`;
    for (const [name, d] of Object.entries(dirs)) process.stdout.write(line(name, d, existsSync(d.path)));
    for (const d of captureDirs) process.stdout.write(line("captures", d, d.exists));
    process.stdout.write(
      `\ndiscovery: ${found.documents} message documents (${found.fromIndex} named by the index, ${found.fromWalk} found by the walk), ` +
        `${found.captureFiles} capture files\n` +
        `index:     ${index.status}, ${index.rows.length} rows${index.problem ? ` — ${index.problem}` : ""}\n`,
    );
    for (const p of captureListing.problems)
      process.stdout.write(`captures:  ${p.code}: ${p.path}: ${p.detail}\n`);
    const present = taskRoots.filter((r) => r.exists);
    process.stdout.write(
      `tasks:     ${present.length} of ${taskRoots.length} task-format roots exist` +
        `${present.length > 0 ? ` (${present.reduce((n, r) => n + r.tasks, 0)} task folders)` : ""}\n`,
    );
    for (const r of present)
      process.stdout.write(
        `  ${r.path}  ${r.tasks} tasks  cline.client=${r.client} ${r.product} (${r.foundBy})\n`,
      );
    const missing = noClineDataMessage(config);
    if (missing !== undefined) process.stdout.write(`\n${missing}\n`);
  });
  return cmd;
}
