/**
 * `cline.client` of a task from task_metadata.json's hosts (docs/cline-format.md §15.10): the
 * mapping of host names, per request by time, the root's client as the fallback, a torn file
 * retried, an unexpected name reported once; the real CLI recordings say `cli` whatever the root.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import { clientOfHostName } from "../../../src/adapter/cline-tasks/host.ts";
import { clientTimeline } from "../../../src/adapter/cline-tasks/metadata.ts";
import type { TaskClient, TaskRoot } from "../../../src/adapter/cline-tasks/types.ts";
import type { Observation } from "../../../src/adapter/types.ts";
import { counts, request, say, tool, writeTask } from "./helpers.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cline-hosts-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const root = (path: string, client: TaskClient): TaskRoot => ({
  path,
  client,
  product: "test",
  foundBy: "test",
});

/** The host names of a committed task_metadata.json, read the ordinary way (test side only). */
function hostNamesOf(path: string): string[] {
  const m = JSON.parse(readFileSync(path, "utf8")) as { environment_history: { host_name: string }[] };
  return m.environment_history.map((e) => e.host_name);
}

function writeMeta(taskDir: string, hosts: readonly { ts: number; host_name: string }[] | string): void {
  mkdirSync(taskDir, { recursive: true });
  const body =
    typeof hosts === "string"
      ? hosts
      : JSON.stringify({
          files_in_context: [{ path: "a.ts", record_state: "active" }],
          model_usage: [],
          environment_history: hosts.map((h) => ({ os_name: "linux", host_version: "1", ...h })),
        });
  writeFileSync(join(taskDir, "task_metadata.json"), body);
}

async function readAll(roots: readonly TaskRoot[]): Promise<Observation[]> {
  const adapter = createClineTasksAdapter(roots);
  const d = await adapter.discover();
  return Promise.all(d.sources.map((s) => adapter.collectIncremental(s, undefined)));
}

function clientsOf(obs: readonly Observation[]): string[] {
  return obs.flatMap((o) =>
    o.status === "read" ? [...o.events.map((e) => e.client), ...o.toolCalls.map((c) => c.client)] : [],
  ) as string[];
}

describe("clientOfHostName", () => {
  it("maps each host's name, from Cline's source and the real CLI", () => {
    const real = hostNamesOf(
      "fixtures/cline-tasks/openai-tools/home/.cline/data/tasks/1796159200295/task_metadata.json",
    );
    expect(real.map(clientOfHostName)).toEqual([{ kind: "known", client: "cli" }]);
    const known = (client: string) => ({ kind: "known", client });
    for (const n of ["Visual Studio Code", "Visual Studio Code - Insiders", "Cursor", "VSCodium", "Windsurf"])
      expect(clientOfHostName(n)).toEqual(known("vscode"));
    for (const n of [
      "IntelliJ Ultimate Edition",
      "PyCharm",
      "WebStorm",
      "GoLand",
      "Android Studio",
      "RustRover",
    ])
      expect(clientOfHostName(n)).toEqual(known("jetbrains"));
    for (const n of [undefined, "", "  ", "Unknown"]) expect(clientOfHostName(n)).toEqual({ kind: "absent" });
    expect(clientOfHostName("Zed <x>")).toEqual({ kind: "unexpected", shown: "zed ?x?" });
    expect(clientOfHostName("y".repeat(40))).toEqual({ kind: "unexpected", shown: `${"y".repeat(32)}...` });
  });

  it("labels each message by the latest host at or before it; the root's client when none says", () => {
    const cli = root("/r", "cli");
    const t = clientTimeline(
      [
        { ts: 100, host: clientOfHostName("Cline CLI - Node.js") },
        { ts: 300, host: clientOfHostName("PyCharm") },
        { ts: 500, host: clientOfHostName("Unknown") },
        { ts: 700, host: clientOfHostName("Zed") },
      ],
      cli,
    );
    expect([50, 100, 299, 300, 499, 500, 700].map(t.of)).toEqual([
      "cli",
      "cli",
      "cli",
      "jetbrains",
      "jetbrains",
      "cli",
      "unknown",
    ]);
    expect(t.unexpected).toEqual(["zed"]);
    expect(clientTimeline([{ ts: 1, host: clientOfHostName("Zed") }], root("/v", "vscode")).of(2)).toBe(
      "vscode",
    );
    expect(clientTimeline([], root("/v", "vscode")).of(2)).toBe("vscode");
  });
});

describe("the task adapter's cline.client", () => {
  it("is cli for the real CLI recordings, even on a root that would say otherwise", async () => {
    const data = join(dir, "data");
    cpSync("fixtures/cline-tasks/openai-tools/home/.cline/data", data, { recursive: true });
    const got = clientsOf(await readAll([root(data, "vscode")]));
    expect(got.length).toBeGreaterThan(2);
    expect(new Set(got)).toEqual(new Set(["cli"]));
  });

  it("is jetbrains and vscode for the synthetic JetBrains and VS Code tasks", async () => {
    const jb = clientsOf(await readAll([root("fixtures/cline-tasks-synthetic/jetbrains", "cli")]));
    const vs = clientsOf(await readAll([root("fixtures/cline-tasks-synthetic/vscode", "cli")]));
    expect(jb.length).toBeGreaterThan(2);
    expect(new Set(jb)).toEqual(new Set(["jetbrains"]));
    expect(vs.length).toBe(jb.length);
    expect(new Set(vs)).toEqual(new Set(["vscode"]));
  });

  it("follows a task resumed in another host, and falls back to the root without metadata", async () => {
    const data = join(dir, "data");
    writeTask(data, "1", [
      say(5, "task", "p"),
      request(10, counts(100, 10)),
      tool(11, "readFile"),
      request(20, counts(200, 20)),
      say(21, "user_feedback", "again"),
      request(40, counts(300, 30)),
      say(41, "text", "ok"),
    ]);
    writeMeta(join(data, "tasks", "1"), [
      { ts: 4, host_name: "Cline CLI - Node.js" },
      { ts: 30, host_name: "GoLand" },
    ]);
    writeTask(data, "2", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    const obs = await readAll([root(data, "cli")]);
    const byTask = obs.map((o) =>
      o.status === "read" ? o.events.map((e) => [e.timestampMs, e.client]) : [],
    );
    expect(byTask).toEqual([
      [
        [10, "cli"],
        [20, "cli"],
        [40, "jetbrains"],
      ],
      [[10, "cli"]],
    ]);
  });

  it("reports an unexpected host name once and labels it unknown on the shared root", async () => {
    const data = join(dir, "data");
    for (const id of ["1", "2"]) {
      writeTask(data, id, [request(10, counts(1, 1)), say(11, "text", "ok")]);
      writeMeta(join(data, "tasks", id), [{ ts: 1, host_name: "Zed" }]);
    }
    const obs = await readAll([root(data, "cli")]);
    expect(clientsOf(obs)).toEqual(["unknown", "unknown"]);
    const problems = obs.flatMap((o) => (o.status === "read" ? o.problems.map((p) => p.code) : []));
    expect(problems).toEqual(["unknown-host-name"]);
  });

  it("retries a torn task_metadata.json, and takes the root's client when it stays broken", async () => {
    const data = join(dir, "data");
    const task = join(data, "tasks", "1");
    writeTask(data, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    writeMeta(task, '{"files_in_context":[],"environment_history":[{"ts":1,"host_name":"PyC');
    const adapter = createClineTasksAdapter([root(data, "cli")]);
    const [s] = (await adapter.discover()).sources;
    if (s === undefined) throw new Error("no source");
    const first = await adapter.collectIncremental(s, undefined);
    expect(first.status === "failed" && first.problem.code).toBe("task-metadata-partial");
    // The same torn state again: broken, not a write under way.
    const second = await adapter.collectIncremental(s, undefined);
    expect(second.status === "read" && second.problems.map((p) => p.code)).toEqual([
      "task-metadata-unreadable",
    ]);
    expect(clientsOf([second])).toEqual(["cli"]);
    // Once written whole, the next read takes it.
    writeMeta(task, [{ ts: 1, host_name: "PyCharm" }]);
    expect(clientsOf([await adapter.collectIncremental(s, undefined)])).toEqual(["jetbrains"]);
  });
});
