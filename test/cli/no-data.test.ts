/**
 * "No Cline data found" (src/cli/no-data.ts, issue 28): never said to a user whose only data is a
 * task-format root (the VS Code extension's global storage, or ~/.cline/data/tasks of JetBrains
 * and Cline CLI 1.x/2.x) while its tasks are read; said, when nothing anywhere has data, with every
 * place looked in (as `paths` lists them) and how to add one.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLINE_EXTENSION_ID } from "../../src/adapter/cline-tasks/paths.ts";
import { noClineDataMessage } from "../../src/cli/no-data.ts";
import { resolveLocalConfig } from "../../src/config/config.ts";
import { request, say, writeTask } from "../adapter/cline-tasks/helpers.ts";
import { runCli } from "../helpers/cli.ts";

const NO_DATA = /No Cline data found/;
let dir: string;
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "no-data-"));
  home = join(dir, "home");
  mkdirSync(home);
  env = { HOME: home, CLINE_OTEL_STATE_DIR: join(dir, "state"), XDG_CONFIG_HOME: join(home, ".config") };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** One settled request of 40 input tokens in a task-format root. */
function oneTask(root: string): void {
  const counts = { tokensIn: 40, tokensOut: 4, cacheReads: 0, cacheWrites: 0, cost: 0 };
  writeTask(root, "1796000000042", [say(1, "task", "t"), request(10, counts), say(11, "text", "ok")]);
}

const ROOTS = {
  "the VS Code extension's global storage only": () =>
    join(home, ".config", "Code", "User", "globalStorage", CLINE_EXTENSION_ID),
  "~/.cline/data/tasks only (JetBrains, Cline CLI 1.x/2.x)": () => join(home, ".cline", "data"),
};

describe("a user whose only data is a task-format root", () => {
  for (const [name, root] of Object.entries(ROOTS)) {
    it(`${name}: report and run read its tasks and never say "No Cline data found"`, () => {
      oneTask(root());
      const rep = runCli(["report", "--json"], env);
      expect(rep.status, rep.stderr).toBe(0);
      expect(rep.stderr).not.toMatch(NO_DATA);
      expect((JSON.parse(rep.stdout) as { totals: { input: number } }).totals.input).toBe(40);

      const state = { ...env, CLINE_OTEL_STATE_DIR: join(dir, "state-run") };
      const run = runCli(["run", "--once"], state);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(NO_DATA);
      // What run collected is in its ledger.
      const after = runCli(["report", "--json", "--no-collect"], state);
      expect((JSON.parse(after.stdout) as { totals: { input: number } }).totals.input).toBe(40);

      const paths = runCli(["paths"], env);
      expect(paths.stdout).not.toMatch(NO_DATA);
    });
  }
});

describe("nothing anywhere", () => {
  it("report, run and paths say so, naming every place looked in (as paths lists them) and how to add one", () => {
    const p = runCli(["paths", "--json"], env);
    expect(p.status, p.stderr).toBe(0);
    const listed = JSON.parse(p.stdout) as {
      sessions: { path: string };
      db: { path: string };
      captures: { path: string }[];
      taskRoots: { path: string; foundBy: string }[];
    };
    const places = [
      listed.sessions.path,
      listed.db.path,
      ...listed.captures.map((c) => c.path),
      ...listed.taskRoots.map((r) => r.path),
    ];
    expect(listed.taskRoots.length).toBeGreaterThan(5);
    const outputs = {
      report: runCli(["report", "--json"], env).stderr,
      run: runCli(["run", "--once"], { ...env, CLINE_OTEL_STATE_DIR: join(dir, "state-run") }).stderr,
      paths: runCli(["paths"], env).stdout,
    };
    for (const [command, out] of Object.entries(outputs)) {
      expect(out, command).toMatch(NO_DATA);
      const lines = out.split("\n");
      for (const place of places)
        expect(
          lines.some((l) => l.includes(`  ${place}  (`)),
          `${command}: ${place}`,
        ).toBe(true);
      // How to add one: the CLI's directories, and a task-format root.
      expect(out).toMatch(/CLINE_DIR, CLINE_DATA_DIR, CLINE_SESSION_DATA_DIR or CLINE_DB_DATA_DIR/);
      expect(out).toMatch(/--cline-dir, --data-dir, --sessions-dir, --db-dir/);
      expect(out).toMatch(/--task-root <dir> \(repeatable\) or CLINE_OTEL_TASK_ROOTS/);
      expect(out).toContain(`in any of the ${places.length} places looked in`);
    }
  });

  it("each kind of place alone silences it: the sessions dir, the db dir, a capture dir, a named task root", () => {
    const config = (flags: Record<string, unknown> = {}) =>
      resolveLocalConfig(flags, env, home, dir, "linux");
    expect(noClineDataMessage(config())).toMatch(NO_DATA);
    const cases: [string, () => void, Record<string, unknown>][] = [
      ["sessions", () => mkdirSync(join(home, ".cline", "data", "sessions"), { recursive: true }), {}],
      ["db", () => mkdirSync(join(home, ".cline", "data", "db"), { recursive: true }), {}],
      [
        "captures",
        () => mkdirSync(join(dir, "caps"), { recursive: true }),
        { captureDir: join(dir, "caps") },
      ],
      [
        "task root",
        () => mkdirSync(join(dir, "elsewhere", "tasks"), { recursive: true }),
        { taskRoot: [join(dir, "elsewhere")] },
      ],
    ];
    for (const [name, make, flags] of cases) {
      rmSync(home, { recursive: true, force: true });
      rmSync(join(dir, "caps"), { recursive: true, force: true });
      rmSync(join(dir, "elsewhere"), { recursive: true, force: true });
      expect(noClineDataMessage(config(flags)), `${name} missing`).toMatch(NO_DATA);
      make();
      expect(noClineDataMessage(config(flags)), name).toBeUndefined();
    }
    // A root's folder without tasks/ is not data (the adapter reads only tasks/<id>/).
    mkdirSync(join(dir, "empty-root", "state"), { recursive: true });
    expect(noClineDataMessage(config({ taskRoot: [join(dir, "empty-root")] }))).toMatch(NO_DATA);
  });
});
