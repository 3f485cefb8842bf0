/**
 * Tool calls the user was asked about (`ask: "tool"` / `ask: "command"`) and failed replaces
 * (`say: "diff_error"`) are calls too, and each call's outcome is read from the next request's
 * text (src/adapter/cline-tasks/answers.ts, docs/cline-format.md §16).
 */
import { describe, expect, it } from "vitest";
import {
  ANSWER_PHRASES,
  answerOutcomes,
  HEADER_GAP_BYTES,
} from "../../../src/adapter/cline-tasks/answers.ts";
import { ask, recorded as c, parse, request, say, tool, type UiMessage } from "./helpers.ts";

const hits = (...pairs: [number, number][]) => ({
  phrase: pairs.map((p) => p[0]),
  at: pairs.map((p) => p[1]),
  truncated: false,
});
const H = ANSWER_PHRASES[0].length;

describe("answerOutcomes", () => {
  it("a result is a success; denied or failed right after its header is rejected or a failure", () => {
    expect(answerOutcomes(hits([0, 0], [0, 100], [1, 100 + H + 3], [0, 300], [2, 300 + H + 1]))).toEqual([
      "success",
      "rejected",
      "failure",
    ]);
  });

  it("a queued call skipped after a denial is rejected, in its place", () => {
    expect(answerOutcomes(hits([0, 0], [1, H + 1], [3, 80], [3, 200]))).toEqual([
      "rejected",
      "rejected",
      "rejected",
    ]);
  });

  it("a phrase further inside a result (a file that quotes it) decides nothing", () => {
    expect(answerOutcomes(hits([0, 0], [1, H + HEADER_GAP_BYTES + 1]))).toEqual(["success"]);
    expect(answerOutcomes(hits([0, 0], [1, H + 2], [2, H + 40]))).toEqual(["rejected"]);
    expect(answerOutcomes(hits([1, 0]))).toEqual([]);
  });
});

/** The next request's text as the legacy core writes it: `[tool for 'path'] Result:` + newline + result. */
const answered = (ts: number, ...results: string[]) =>
  request(ts, c(50 + ts, 5), undefined, `${results.join("\n\n")}\n\n<environment_details>...`);

const editAsk = (ts: number, name = "newFileCreated", content = "one\ntwo") =>
  ask(
    ts,
    "tool",
    JSON.stringify({ tool: name, path: "src/a.ts", content, operationIsLocatedInWorkspace: true }),
  );

describe("task format: asked calls, failed replaces and their outcomes", () => {
  const run: UiMessage[] = [
    say(1, "task", "t"),
    request(10, c(100, 10)),
    editAsk(11, "editedExistingFile", "------- SEARCH\na\n=======\nb\n+++++++ REPLACE"),
    answered(
      20,
      "[replace_in_file for 'src/a.ts'] Result:\nThe user denied this operation. The file was not updated.",
    ),
    editAsk(21),
    answered(30, "[write_to_file for 'src/a.ts'] Result:\nThe content was successfully saved to src/a.ts."),
    ask(31, "command", "git commit -m xREQ_APP"),
    answered(40, "[execute_command for 'git commit -m x'] Result:\nCommand executed."),
    { ...say(41, "diff_error", "src/b.ts"), partial: true },
    answered(
      50,
      "[replace_in_file for 'src/b.ts'] Result:\nThe tool execution failed with the following error:\n<error>",
    ),
    tool(51, "readFile"),
    say(52, "command", "ls"),
    answered(
      60,
      "[read_file for 'x'] Result:\nbody",
      "Skipping tool due to user rejecting a previous tool. [execute_command for 'ls']",
    ),
    say(61, "text", "done"),
  ];

  it("counts every call once, each 1/n of its request, with the outcome the next request gives", () => {
    const p = parse(run);
    expect(p.toolCalls.map((t) => [t.toolName, t.divisor, t.usageKey !== ""])).toEqual([
      ["editedExistingFile", 1, true],
      ["newFileCreated", 1, true],
      ["execute_command", 1, true],
      ["editedExistingFile", 1, true],
      ["readFile", 2, true],
      ["execute_command", 2, true],
    ]);
    expect(p.events.map((e) => e.toolCallCount)).toEqual([1, 1, 1, 1, 2, 0]);
    expect(p.signals.toolResults.map((r) => [r.outcome, r.isError, r.timestampMs])).toEqual([
      ["rejected", true, 20],
      ["success", false, 30],
      ["success", false, 40],
      ["failure", true, 50],
      ["success", false, 60],
      ["rejected", true, 60],
    ]);
  });

  it("a call whose answer has not been written yet stays open (no result)", () => {
    const p = parse(run.slice(0, 5).concat([ask(12, "completion_result")]));
    expect(p.toolCalls.map((t) => t.toolName)).toEqual(["editedExistingFile", "newFileCreated"]);
    expect(p.signals.toolResults.map((r) => r.outcome)).toEqual(["rejected"]);
  });

  it("an ask rewritten in place (partial, then settled: same ts) and re-read is one call with one key", () => {
    const partial = { ...editAsk(21), partial: true };
    const streaming = parse([...run.slice(0, 4), partial]);
    const settled = parse(run);
    expect(streaming.toolCalls.map((t) => t.callKey)).toEqual(
      settled.toolCalls.slice(0, 1).map((t) => t.callKey),
    );
    expect(settled.toolCalls[1]?.callKey).toMatch(/\|tool\|21\|0$/);
    expect(new Set(settled.toolCalls.map((t) => t.callKey)).size).toBe(settled.toolCalls.length);
  });

  it("a request text without any result (a resume) answers nothing", () => {
    const p = parse([
      request(10, c(100, 10)),
      editAsk(11),
      ask(12, "resume_task"),
      request(20, c(200, 10), undefined, "[TASK RESUMPTION] This task was interrupted"),
      say(21, "text", "ok"),
    ]);
    expect(p.toolCalls).toHaveLength(1);
    expect(p.signals.toolResults).toEqual([]);
  });
});
