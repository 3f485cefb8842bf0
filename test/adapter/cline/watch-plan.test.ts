import { describe, expect, it } from "vitest";
import { clineWatchPlan } from "../../../src/adapter/cline/watch-plan.ts";

const at = (path: string) => ({ path, origin: "flag" as const, via: "test" });
const plan = clineWatchPlan(
  { root: at("/c"), data: at("/c/data"), sessions: at("/c/data/sessions"), db: at("/c/data/db") },
  [at("/c/data/provider-request-captures")],
);

describe("clineWatchPlan", () => {
  it("watches the sessions dir's folders, the db dir and the capture dirs", () => {
    expect(plan).toMatchObject({
      sourcesRoot: "/c/data/sessions",
      indexDir: "/c/data/db",
      otherDirs: ["/c/data/provider-request-captures"],
    });
  });

  it.each([
    ["1_a.messages.json", true],
    ["1_a.compaction.json", true],
    ["1_a.compaction.json.tmp-123", false],
    ["1_a.json", false],
    [".messages.json", false],
  ])("source file %s: %s", (name, relevant) => {
    expect(plan.isSourceFile(name)).toBe(relevant);
  });

  it.each([
    ["sessions.db", true],
    ["sessions.db-wal", true],
    ["sessions.db-shm", true],
    ["other.db", false],
  ])("index file %s: %s", (name, relevant) => {
    expect(plan.isIndexFile(name)).toBe(relevant);
  });
});
