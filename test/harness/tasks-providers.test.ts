import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type LoadedTaskGroundTruth,
  loadTaskGroundTruth,
  storedTaskRequests,
  taskFixtureScenarios,
} from "../../fixtures/harness/ground-truth-tasks.ts";
import { TASK_PROVIDERS } from "../../fixtures/harness/providers-tasks.ts";
import { PROVIDER_SCENARIOS } from "../../fixtures/harness/scenarios-providers.ts";
import { TASK_SCENARIOS } from "../../fixtures/harness/scenarios-tasks.ts";
import { PROVIDER_RULES } from "../../src/adapter/cline-tasks/provider-rule.ts";
import type { UsageEvent } from "../../src/adapter/types.ts";
import { ROOT } from "../helpers/cli.ts";
import { collectTasks, eventComponents, recordComponents } from "./tasks-collect.ts";

/**
 * One real Cline CLI 2.18.0 fixture per further provider (fixtures/cline-tasks/<provider>-cache,
 * fixtures/harness/scenarios-providers.ts): the task adapter's four components per request must
 * be what the mock's usage meant. Every wire with a cache field carries cache counts, so the
 * provider's rule in src/adapter/cline-tasks/provider-rule.ts decides the outcome: flipped, these
 * fail.
 */

const names = PROVIDER_SCENARIOS.map((s) => s.name);
const gtOf = (n: string): LoadedTaskGroundTruth => loadTaskGroundTruth(n);
type Rec = LoadedTaskGroundTruth["records"][number];
const cacheOf = (r: Rec) => r.recorded.cacheReads + r.recorded.cacheWrites;
/** A response without usage for which Cline stored a running total (asksage's monthly count). */
const runningTotal = (r: Rec) =>
  r.recorded.tokensOut === 0 && r.recorded.tokensIn > 0 && r.components.input === 0;

describe("per-provider task-format fixtures of the real Cline CLI 2.18.0", () => {
  it("exist for every provider scenario, one provider each", () => {
    const present = new Set(taskFixtureScenarios());
    for (const n of names) expect(present.has(n), n).toBe(true);
    expect(new Set(PROVIDER_SCENARIOS.map((s) => s.provider)).size).toBe(PROVIDER_SCENARIOS.length);
  });

  it.each(names)("%s: stored counts are what the provider's handler makes of the mock's usage", (name) => {
    const gt = gtOf(name);
    const stored = storedTaskRequests(join(gt.fixtureRoot, gt.dataDir));
    expect(stored.map((s) => s.counts)).toEqual(gt.records.map((r) => r.recorded));
    expect(stored.every((s) => s.providerId === gt.provider)).toBe(true);
  });

  it.each(
    names,
  )("%s: the adapter's four components per request are the mock's, by the provider's rule", async (name) => {
    const gt = gtOf(name);
    const { events, problems } = await collectTasks(join(gt.fixtureRoot, gt.dataDir));
    // Only a running total stored for a response without usage is reported (and not counted).
    expect(problems.map((p) => p.split(":")[0])).toEqual(
      gt.records.filter(runningTotal).map(() => "running-total"),
    );
    expect(events).toHaveLength(gt.records.length);
    gt.records.forEach((r, i) => {
      const e = events[i] as UsageEvent;
      expect(eventComponents(e), `${name} record ${i}`).toEqual(recordComponents(r));
      expect(e.input + e.output + e.cacheRead + e.cacheWrite).toBe(e.total);
      expect([e.provider, e.model, e.client]).toEqual([gt.provider, r.model, "cli"]);
    });
    // taskHistory.json's lifetime totals are the per-request sums (no history-mismatch above).
    const history = JSON.parse(
      readFileSync(join(gt.fixtureRoot, gt.dataDir, "state", "taskHistory.json"), "utf8"),
    ) as { tokensIn: number; tokensOut: number }[];
    expect(history.map((h) => [h.tokensIn, h.tokensOut])).toEqual([
      [gt.totals.tokensIn, gt.totals.tokensOut],
    ]);
  });

  it.each(names)("%s: the table's rule agrees with what the CLI stored", (name) => {
    const gt = gtOf(name);
    const rule = PROVIDER_RULES[gt.provider];
    const withCache = gt.records.filter((r) => cacheOf(r) > 0);
    for (const r of gt.records.filter((x) => !runningTotal(x))) {
      const c = r.components;
      if (rule === "includes") expect(r.recorded.tokensIn).toBe(c.input + c.cacheRead + c.cacheWrite);
      else expect(r.recorded.tokensIn).toBe(c.input);
    }
    // A rule is only tested by cache counts: every wire with a cache field sent some.
    if (rule === "none") expect(gt.records.every((r) => cacheOf(r) === 0)).toBe(true);
    else expect(withCache.length).toBeGreaterThan(0);
  });

  it("asksage: a running total is not counted, and its `cost` (AskSage tokens) is no dollar cost", async () => {
    const gt = gtOf("asksage-cache");
    expect(gt.records.filter(runningTotal)).toHaveLength(1);
    const stored = storedTaskRequests(join(gt.fixtureRoot, gt.dataDir));
    expect(stored.filter((s) => (s.cost ?? 0) > 0)).toHaveLength(2);
    const { events } = await collectTasks(join(gt.fixtureRoot, gt.dataDir));
    expect(events.map((e) => e.recordedCost)).toEqual([null, null, null]);
    // A priced provider's cost is kept (to verify ours).
    const native = gtOf("openai-native-cache");
    const nativeEvents = (await collectTasks(join(native.fixtureRoot, native.dataDir))).events;
    expect(nativeEvents.map((e) => e.recordedCost)).toEqual(
      storedTaskRequests(join(native.fixtureRoot, native.dataDir)).map((s) => s.cost),
    );
    expect(nativeEvents.every((e) => (e.recordedCost ?? 0) > 0)).toBe(true);
  });

  it("cover every provider profile of the harness, and only providers the table knows", () => {
    const covered = new Set([...TASK_SCENARIOS, ...PROVIDER_SCENARIOS].map((s) => s.provider));
    expect([...covered].sort()).toEqual(TASK_PROVIDERS.map((p) => p.id).sort());
    for (const p of covered) expect(Object.hasOwn(PROVIDER_RULES, p), p).toBe(true);
  });

  it("docs/cline-format.md §15.5 says `real CLI` for exactly the providers with a fixture", () => {
    const doc = readFileSync(join(ROOT, "docs/cline-format.md"), "utf8");
    const section = doc.slice(doc.indexOf("### 15.5"), doc.indexOf("### 15.6"));
    const rows = section.split("\n").filter((l) => /^\| (includes|excludes|none) \|/.test(l));
    const verified = new Set(
      rows
        .filter((r) => r.trimEnd().split("|").at(-2)?.includes("real CLI"))
        .flatMap((r) => [...(r.split("|")[2] ?? "").matchAll(/`([A-Za-z0-9-]+)`/g)].map((m) => m[1])),
    );
    const covered = new Set([...TASK_SCENARIOS, ...PROVIDER_SCENARIOS].map((s) => s.provider));
    expect([...verified].sort()).toEqual([...covered].sort());
  });
});
