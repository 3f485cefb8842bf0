import { describe, expect, it } from "vitest";
import { taskWatchPlan } from "../../../src/adapter/cline-tasks/watch-plan.ts";

const plan = taskWatchPlan({ path: "/h/.cline/data", client: "cli", product: "test", foundBy: "test" });

describe("taskWatchPlan", () => {
  it("watches the root's task folders and its state dir", () => {
    expect(plan).toMatchObject({ sourcesRoot: "/h/.cline/data/tasks", indexDir: "/h/.cline/data/state" });
  });

  it.each([
    ["ui_messages.json", true],
    ["ui_messages.json.tmp.1733000000000.k3x9.json", false],
    ["api_conversation_history.json", false],
    ["task_metadata.json", false],
  ])("source file %s: %s", (name, relevant) => {
    expect(plan.isSourceFile(name)).toBe(relevant);
  });

  it.each([
    ["taskHistory.json", true],
    ["taskHistory.json.tmp.1.x.json", false],
    ["secrets.json", false],
  ])("index file %s: %s", (name, relevant) => {
    expect(plan.isIndexFile(name)).toBe(relevant);
  });
});
