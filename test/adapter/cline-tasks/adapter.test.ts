import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import { CLINE_EXTENSION_ID, taskRootCandidates } from "../../../src/adapter/cline-tasks/paths.ts";
import type { Observation, SourceCheckpoint } from "../../../src/adapter/types.ts";
import { ask, counts, request, say, tool, writeHistory, writeTask } from "./helpers.ts";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "cline-tasks-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function roots(env: Record<string, string> = {}, platform: NodeJS.Platform = "linux") {
  return taskRootCandidates({ home, platform, env, cwd: home });
}

describe("task roots", () => {
  it("name the CLI's data dir and every editor's global storage, on each platform", () => {
    const linux = roots();
    expect(linux[0]).toMatchObject({
      path: join(home, ".cline", "data"),
      client: "cli",
      foundBy: "<home>/.cline",
    });
    expect(linux.map((r) => r.path)).toContain(
      join(home, ".config", "Cursor", "User", "globalStorage", CLINE_EXTENSION_ID),
    );
    expect(linux.map((r) => r.path)).toContain(
      join(home, ".vscode-server", "data", "User", "globalStorage", CLINE_EXTENSION_ID),
    );
    expect(roots({ CLINE_DIR: "/x" })[0]).toMatchObject({ path: "/x/data", foundBy: "CLINE_DIR" });
    const mac = roots({}, "darwin").map((r) => r.path);
    expect(mac).toContain(
      join(home, "Library", "Application Support", "Code", "User", "globalStorage", CLINE_EXTENSION_ID),
    );
    const win = taskRootCandidates({
      home: "C:\\Users\\u",
      platform: "win32",
      env: { APPDATA: "D:\\AD" },
      cwd: "C:\\",
    });
    expect(win.map((r) => r.path)).toContain("D:\\AD\\Windsurf\\User\\globalStorage\\saoudrizwan.claude-dev");
    expect(new Set(linux.map((r) => r.path)).size).toBe(linux.length);
  });

  it("take added roots and drop removed ones", () => {
    const r = taskRootCandidates({
      home,
      platform: "linux",
      env: {},
      cwd: home,
      add: [{ path: "extra/saoudrizwan.claude-dev", via: "--task-root" }],
      remove: [join(home, ".cline", "data")],
    });
    expect(r[0]).toMatchObject({
      path: join(home, "extra", CLINE_EXTENSION_ID),
      client: "vscode",
      foundBy: "--task-root",
    });
    expect(r.map((x) => x.path)).not.toContain(join(home, ".cline", "data"));
  });
});

describe("task adapter", () => {
  async function collect(
    cp?: SourceCheckpoint,
  ): Promise<{ obs: Observation[]; found: number; problems: string[] }> {
    const adapter = createClineTasksAdapter(roots());
    const d = await adapter.discover();
    const obs: Observation[] = [];
    for (const s of d.sources) obs.push(await adapter.collectIncremental(s, cp));
    const problems = [...d.problems, ...obs.flatMap((o) => (o.status === "read" ? o.problems : []))].map(
      (p) => p.code,
    );
    return { obs, found: adapter.foundRoots().length, problems };
  }

  it("finds tasks of existing roots only, never temp files or secrets, and reads them", async () => {
    const data = join(home, ".cline", "data");
    writeTask(data, "1796000000001", [
      say(1, "task", "t"),
      request(10, counts(100, 20)),
      tool(11, "readFile"),
      ask(12, "completion_result"),
    ]);
    writeFileSync(join(data, "tasks", "1796000000001", "ui_messages.json.tmp.1.abc.json"), "{not json");
    writeFileSync(join(data, "secrets.json"), "{}");
    mkdirSync(join(data, "tasks", "1796000000002"));
    const vs = join(home, ".config", "Code", "User", "globalStorage", CLINE_EXTENSION_ID);
    writeTask(vs, "1796000000003", [request(10, counts(5, 5)), say(11, "text", "ok")]);
    const { obs, found, problems } = await collect();
    expect(found).toBe(2);
    expect(problems).toEqual([]);
    expect(obs.map((o) => o.source.path).sort()).toEqual(
      [
        join(data, "tasks", "1796000000001", "ui_messages.json"),
        join(vs, "tasks", "1796000000003", "ui_messages.json"),
      ].sort(),
    );
    const events = obs.flatMap((o) => (o.status === "read" ? o.events : []));
    expect(events.map((e) => [e.client, e.total]).sort()).toEqual([
      ["cli", 120],
      ["vscode", 10],
    ]);
  });

  it("checks the per-request sums against taskHistory.json, never adding its totals", async () => {
    const data = join(home, ".cline", "data");
    writeTask(data, "1796000000001", [
      request(10, counts(100, 20)),
      request(20, counts(50, 5)),
      say(21, "text", "ok"),
    ]);
    writeHistory(data, [
      {
        id: "1796000000001",
        tokensIn: 150,
        tokensOut: 25,
        cacheReads: 0,
        cacheWrites: 0,
        totalCost: 0,
        cwdOnTaskInitialization: "/w/p",
        task: "prompt",
      },
    ]);
    const ok = await collect();
    expect(ok.problems).toEqual([]);
    const e = ok.obs[0]?.status === "read" ? ok.obs[0].events : [];
    expect(e.map((x) => x.project)).toEqual(["/w/p", "/w/p"]);
    expect(e.reduce((s, x) => s + x.total, 0)).toBe(175);
    writeHistory(data, [
      { id: "1796000000001", tokensIn: 999, tokensOut: 25, cacheReads: 0, cacheWrites: 0, totalCost: 0 },
    ]);
    expect((await collect()).problems).toEqual(["history-mismatch"]);
    // Below the requests' sums: the history not yet rewritten after the newest request, no problem.
    writeHistory(data, [
      { id: "1796000000001", tokensIn: 100, tokensOut: 20, cacheReads: 0, cacheWrites: 0, totalCost: 0 },
    ]);
    expect((await collect()).problems).toEqual([]);
  });

  it("a rewrite through a temp file and a rename keeps every key and adds only the new request", async () => {
    const data = join(home, ".cline", "data");
    writeTask(data, "1796000000001", [request(10, counts(100, 20)), request(20, undefined)]);
    const first = await collect();
    const o1 = first.obs[0];
    if (o1?.status !== "read") throw new Error("not read");
    writeTask(data, "1796000000001", [
      request(10, counts(100, 20)),
      request(20, counts(7, 7)),
      say(21, "text", "ok"),
    ]);
    const second = await collect(o1.checkpoint);
    const o2 = second.obs[0];
    if (o2?.status !== "read") throw new Error("not read again");
    expect(o2.checkpoint.ino).not.toBe(o1.checkpoint.ino);
    const k1 = o1.events.map((e) => e.dedupKey);
    const k2 = o2.events.map((e) => e.dedupKey);
    expect(k2.slice(0, 1)).toEqual(k1);
    expect(k2).toHaveLength(2);
    // Unchanged since: not opened.
    expect((await collect(o2.checkpoint)).obs[0]?.status).toBe("unchanged");
  });
});
