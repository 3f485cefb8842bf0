import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLINE_EXTENSION_ID } from "../../src/adapter/cline-tasks/paths.ts";
import { request, say, writeTask } from "../adapter/cline-tasks/helpers.ts";
import { reportJson, runCli } from "../helpers/cli.ts";
import { makeTree } from "../helpers/cline-tree.ts";

/** Cline 3.0.65 reuses a legacy task id for a new, unrelated session (docs/cline-format.md §15.8). */
const SHARED_ID = "1796000000000";
let dir: string;
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "task-format-"));
  home = join(dir, "home");
  env = { HOME: home, CLINE_OTEL_STATE_DIR: join(dir, "state"), XDG_CONFIG_HOME: join(home, ".config") };
  makeTree(home, [
    {
      id: SHARED_ID,
      cwd: "/w/cli",
      messages: [
        {
          id: "msg_1",
          metrics: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 },
        },
      ],
    },
  ]);
  const counts = { tokensIn: 20, tokensOut: 2, cacheReads: 0, cacheWrites: 0, cost: 0 };
  // A request counts once a settled message follows it (docs/cline-format.md §15.8, trap 2).
  writeTask(join(home, ".cline", "data"), SHARED_ID, [
    say(1, "task", "t"),
    request(10, counts),
    say(11, "text", "ok"),
  ]);
  writeTask(join(home, ".config", "Cursor", "User", "globalStorage", CLINE_EXTENSION_ID), "1796000000009", [
    request(10, { ...counts, tokensIn: 300 }),
    say(11, "text", "ok"),
  ]);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the task format next to Cline CLI 3.x", () => {
  it("a task and an SDK session with the same id are both counted: nothing is deduplicated across adapters", () => {
    const r = reportJson(env);
    expect(r.totals.events).toBe(3);
    expect(r.totals.input).toBe(1000 + 20 + 300);
    // Read again: nothing counted twice.
    expect(reportJson(env).totals.events).toBe(3);
    // By client: the CLI's session and task (cli), the extension's task (vscode).
    const byClient = reportJson(env, ["client"]).rows.map((x) => [x.client, x.input, x.events]);
    expect(byClient).toEqual([
      ["cli", 1020, 2],
      ["vscode", 300, 1],
    ]);
  });

  it("paths lists every root found and what found it; flags remove and restrict roots", () => {
    const p = runCli(["paths", "--json"], env);
    expect(p.status, p.stderr).toBe(0);
    const roots = (
      JSON.parse(p.stdout) as {
        taskRoots: { path: string; exists: boolean; foundBy: string; client: string; tasks: number }[];
      }
    ).taskRoots;
    expect(roots.filter((x) => x.exists).map((x) => [x.client, x.foundBy, x.tasks])).toEqual([
      ["cli", "<home>/.cline", 1],
      ["vscode", "XDG_CONFIG_HOME/Cursor", 1],
    ]);
    const text = runCli(["paths"], env);
    expect(text.stdout).toMatch(/^tasks: +2 of \d+ task-format roots exist \(2 task folders\)$/m);

    const cursor = join(home, ".config", "Cursor", "User", "globalStorage", CLINE_EXTENSION_ID);
    const skipped = runCli(["report", "--json", "--skip-task-root", cursor], env);
    expect(skipped.status, skipped.stderr).toBe(0);
    expect((JSON.parse(skipped.stdout) as { totals: { events: number } }).totals.events).toBe(2);
    const only = runCli(["paths", "--json", "--only-task-roots", "--task-root", cursor], env);
    const onlyRoots = (JSON.parse(only.stdout) as { taskRoots: { path: string; foundBy: string }[] })
      .taskRoots;
    expect(onlyRoots.map((x) => [x.path, x.foundBy])).toEqual([[cursor, "--task-root"]]);
  });
});
