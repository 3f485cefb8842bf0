/**
 * A `ui_messages.json` that is a complete JSON document of the wrong shape (an object, a scalar,
 * null): read and reported as `not-a-task-document`, never an internal error (issue 28, item 3).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import { parseUiMessages, taskMessages } from "../../../src/adapter/cline-tasks/parser.ts";
import { uiMessagesSchema } from "../../../src/adapter/cline-tasks/schema.ts";
import { runPass } from "../../../src/collector/pass.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";
import { counts, ROOT, request, say, TASK, writeTask } from "./helpers.ts";

const SHAPES: [string, string][] = [
  ['{"not": "an array"}', "an object"],
  ["5", "a number"],
  ['"text"', "a string"],
  ["true", "a boolean"],
  ["null", "a null"],
];

function scan(text: string) {
  return scanBuffer(Buffer.from(text), uiMessagesSchema);
}

describe("taskMessages", () => {
  for (const [text, shape] of SHAPES)
    it(`${text} is ${shape}, not messages`, () => expect(taskMessages(scan(text))).toEqual({ shape }));
  it("an array is its messages", () => {
    const doc = scan('[{"ts": 1}, null]');
    expect("messages" in taskMessages(doc) && taskMessages(doc)).toEqual({ messages: doc });
  });
  it("no value at all is nothing", () => expect(taskMessages(undefined)).toEqual({ shape: "nothing" }));
});

describe("parseUiMessages of a document of the wrong shape", () => {
  const path = `${ROOT.path}/tasks/${TASK}/ui_messages.json`;
  for (const [text, shape] of SHAPES)
    it(`${text}: not-a-task-document, nothing counted`, () => {
      const p = parseUiMessages(scan(text), { root: ROOT, taskId: TASK, path, project: "/p" });
      expect(p.problems).toEqual([
        { path, code: "not-a-task-document", detail: `top-level value is ${shape}, not an array` },
      ]);
      expect([p.events, p.toolCalls, p.signals.toolResults, p.signals.turns]).toEqual([[], [], [], []]);
      expect(p.sums).toEqual({ tokensIn: 0, tokensOut: 0, cacheReads: 0, cacheWrites: 0 });
      expect(p.waiting).toEqual({ requests: 0, toolCalls: 0 });
    });
});

describe("the adapter on a ui_messages.json that holds an object", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "cline-tasks-shape-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("reads it as a document with one problem, and the task beside it counts", async () => {
    const root = { ...ROOT, path: join(home, "data") };
    writeTask(root.path, "1", [request(10, counts(3, 4)), say(11, "text", "ok")]);
    mkdirSync(join(root.path, "tasks", "2"), { recursive: true });
    writeFileSync(join(root.path, "tasks", "2", "ui_messages.json"), '{"not": "an array"}');
    const adapter = createClineTasksAdapter([root]);
    const obs = [];
    for (const s of (await adapter.discover()).sources)
      obs.push(await adapter.collectIncremental(s, undefined));
    expect(obs.map((o) => o.status)).toEqual(["read", "read"]);
    const [good, bad] = obs;
    expect(good?.status === "read" && good.events.map((e) => [e.input, e.output])).toEqual([[3, 4]]);
    expect(bad?.status === "read" && bad.problems.map((p) => p.code)).toEqual(["not-a-task-document"]);
    expect(bad?.status === "read" && bad.events).toEqual([]);
  });
});

describe("a ts past a Date's range (1e300)", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "cline-tasks-ts-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("is no time: the request is missing-ts, the pass commits (the ledger refused it before)", async () => {
    const root = { ...ROOT, path: join(home, "data") };
    writeTask(root.path, "1", [
      request(1e300, counts(5, 5)),
      { ts: 1e300, type: "say", say: "tool", text: JSON.stringify({ tool: "readFile" }) },
      request(20, counts(3, 4)),
      say(21, "text", "ok"),
    ]);
    const ledger = Ledger.open(join(home, "state"));
    try {
      const pass = await runPass(createClineTasksAdapter([root]), ledger);
      expect(pass.problems.map((p) => p.code)).toContain("missing-ts");
      expect([...ledger.iterateEvents()].map((e) => [e.ts_ms, e.input, e.output])).toEqual([[20, 3, 4]]);
    } finally {
      ledger.close();
    }
  });
});
