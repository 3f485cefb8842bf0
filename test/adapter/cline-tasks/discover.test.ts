/** Discovery of task folders whose ui_messages.json is not a file: reported, never read. */
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discoverTasks, taskFileProblem } from "../../../src/adapter/cline-tasks/discover.ts";
import { HistoryCache } from "../../../src/adapter/cline-tasks/history.ts";
import { counts, ROOT, request, say, writeTask } from "./helpers.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cline-tasks-discover-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("taskFileProblem", () => {
  it("a file or nothing yet is no problem; a directory is not-a-file", () => {
    const p = writeTask(dir, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    expect(taskFileProblem(p, statSync(p))).toBeUndefined();
    expect(taskFileProblem(join(dir, "none"), undefined)).toBeUndefined();
    expect(taskFileProblem(dir, statSync(dir))).toEqual({
      path: dir,
      code: "not-a-file",
      detail: "ui_messages.json is a directory",
    });
  });
});

describe("discoverTasks", () => {
  it("lists the good task, and reports a directory and a symlink loop where ui_messages.json belongs", async () => {
    const root = { ...ROOT, path: join(dir, "data") };
    writeTask(root.path, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    mkdirSync(join(root.path, "tasks", "2", "ui_messages.json"), { recursive: true });
    const loop = join(root.path, "tasks", "3", "ui_messages.json");
    mkdirSync(join(root.path, "tasks", "3"));
    symlinkSync(`${loop}.b`, loop);
    symlinkSync(loop, `${loop}.b`);
    const d = await discoverTasks([root], new HistoryCache());
    expect(d.sources.map((s) => s.hint.sessionId)).toEqual(["1"]);
    expect(d.problems.map((p) => [p.path.slice(root.path.length), p.code])).toEqual([
      ["/tasks/2/ui_messages.json", "not-a-file"],
      ["/tasks/3/ui_messages.json", "unreadable"],
    ]);
  });
});
