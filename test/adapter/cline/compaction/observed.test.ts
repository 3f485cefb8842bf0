/**
 * `cline.compactions` as an observed fact: each compaction the files show is recorded once, and
 * since `<id>.compaction.json` holds only the latest compaction, two compactions between two
 * reads are ONE observation. Shown on the real CLI's data (compaction-agentic compacted twice
 * after its before-copy was taken) and on hand-made files for the edge cases.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadGroundTruth } from "../../../../fixtures/harness/ground-truth.ts";
import { createClineAdapter } from "../../../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { runPass } from "../../../../src/collector/pass.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import { placeCompactionFixture } from "./fixture.ts";

const work = mkdtempSync(join(tmpdir(), "compaction-observed-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const place = placeCompactionFixture;

async function pass(home: string, state: string) {
  const ledger = Ledger.open(state);
  try {
    const r = await runPass(createClineAdapter(resolveClinePaths({}, {}, home)), ledger);
    return { pass: r, rows: ledger.compactionRows(), series: ledger.compactionSeries() };
  } finally {
    ledger.close();
  }
}

describe("on the real CLI's compacted sessions", () => {
  it("compaction-agentic: two compactions between the before-copy and the end state are observed as one", async () => {
    const root = join(work, "agentic");
    const state = join(root, "state");
    const gt = loadGroundTruth("compaction-agentic");
    const before = await pass(place("compaction-agentic", "before", root), state);
    expect(before.rows).toEqual([]);
    const after = await pass(place("compaction-agentic", "final", root), state);
    // The mock served two summaries, so Cline compacted twice; the file keeps only the second.
    expect(gt.requestLog.filter((r) => r.route === "sum")).toHaveLength(2);
    expect(after.rows).toHaveLength(1);
    expect(after.rows[0]).toMatchObject({
      sessionId: gt.rootSessionIds[0],
      agent: "lead",
      strategy: "agentic",
      reason: "unrecorded",
      model: "mock-model",
      provider: "openai-compatible",
      project: "/tmp/cline-otel-fixture/compaction-agentic/ws",
      sourceMessageCount: 19,
      messagesRemoved: null,
    });
    expect(after.rows[0]?.tokensBefore).toBeGreaterThan(0);
    expect(after.series.map((s) => s.compactions)).toEqual([1]);
    expect(after.pass.problems).toEqual([]);
    // Read again, and again after a restart: still one.
    expect((await pass(join(root, "home"), state)).rows).toHaveLength(1);
  });

  it.each([
    ["compaction-basic", "auto_compaction"],
    ["compaction-overflow", "overflow_recovery_compaction"],
  ])("%s: one basic compaction, reason %s, messagesRemoved as Cline counts it", async (scenario, reason) => {
    const root = join(work, scenario);
    const home = place(scenario, "final", root);
    const r = await pass(home, join(root, "state"));
    expect(r.rows).toHaveLength(1);
    const id = loadGroundTruth(scenario).rootSessionIds[0] ?? "";
    const file = JSON.parse(
      readFileSync(join(home, ".cline/data/sessions", id, `${id}.compaction.json`), "utf8"),
    ) as { source_message_count: number; messages: { metadata?: { messagesRemoved?: number } }[] };
    expect(r.rows[0]).toMatchObject({
      strategy: "basic",
      reason,
      tokensBefore: null,
      messagesRemoved: file.messages[0]?.metadata?.messagesRemoved,
      sourceMessageCount: file.source_message_count,
      model: "mock-model",
    });
  });
});

describe("observed exactly once (hand-made compaction files)", () => {
  const ID = "1796000000000_cmpct";
  const compactionFile = (updatedAt: string, sourceMessageCount: number, removed: number) =>
    JSON.stringify({
      version: 1,
      updated_at: updatedAt,
      conversation_id: ID,
      source_message_count: sourceMessageCount,
      source_prefix_hash: "sha256:00",
      source_last_message_key: "id:x",
      messages: [
        {
          id: "p",
          role: "user",
          ts: 1,
          content: [{ type: "text", text: "the first prompt" }],
          metadata: {
            kind: "compaction",
            reason: "auto_compaction",
            messagesRemoved: removed,
            usageBefore: {
              inputTokens: 999999,
              outputTokens: 999999,
              cacheReadTokens: 0,
              cacheWriteTokens: 0,
            },
          },
        },
      ],
    });

  it("a re-read, a touch, a restart: one row per compaction; a new updated_at: a second", async () => {
    const root = join(work, "handmade");
    const home = place("compaction-basic", "final", root);
    const real = loadGroundTruth("compaction-basic").rootSessionIds[0] ?? "";
    // Reuse the real session's document, renamed to our id, so the compaction has a session to join.
    const dir = join(home, ".cline/data/sessions");
    rmSync(join(home, ".cline/data/db"), { recursive: true, force: true });
    cpSync(join(dir, real), join(dir, ID), { recursive: true });
    rmSync(join(dir, real), { recursive: true, force: true });
    for (const ext of [".messages.json", ".json", ".compaction.json"]) {
      cpSync(join(dir, ID, `${real}${ext}`), join(dir, ID, `${ID}${ext}`));
      rmSync(join(dir, ID, `${real}${ext}`));
    }
    const file = join(dir, ID, `${ID}.compaction.json`);
    const state = join(root, "state");

    writeFileSync(file, compactionFile("2026-12-01T10:00:00.000Z", 7, 4));
    expect((await pass(home, state)).rows).toHaveLength(1);
    expect((await pass(home, state)).pass.unchanged).toBeGreaterThan(0);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect((await pass(home, state)).rows).toHaveLength(1);

    writeFileSync(file, compactionFile("2026-12-01T10:05:00.000Z", 11, 8));
    const two = await pass(home, state);
    expect(two.rows.map((r) => [r.sourceMessageCount, r.messagesRemoved])).toEqual([
      [7, 4],
      [11, 8],
    ]);
    expect(two.series.reduce((a, s) => a + s.compactions, 0)).toBe(2);

    // Two more compactions before the next read: only the latest is on disk, so one more.
    writeFileSync(file, compactionFile("2026-12-01T10:06:00.000Z", 15, 12));
    writeFileSync(file, compactionFile("2026-12-01T10:07:00.000Z", 19, 16));
    expect((await pass(home, state)).rows.map((r) => r.sourceMessageCount)).toEqual([7, 11, 19]);
  });

  it("a malformed compaction file is a counted problem; the document's usage is untouched", async () => {
    const root = join(work, "malformed");
    const home = place("compaction-basic", "final", root);
    const id = loadGroundTruth("compaction-basic").rootSessionIds[0] ?? "";
    writeFileSync(
      join(home, ".cline/data/sessions", id, `${id}.compaction.json`),
      JSON.stringify({ version: 2, updated_at: "x" }),
    );
    const r = await pass(home, join(root, "state"));
    expect(r.rows).toEqual([]);
    expect(r.pass.problems.map((p) => p.code)).toEqual(["invalid-compaction"]);
    expect(r.pass.eventsAdded).toBe(loadGroundTruth("compaction-basic").totals.requests);
  });
});
