import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { ROOT } from "../helpers/cli.ts";
import { makeTree } from "../helpers/cline-tree.ts";

const REWRITES = 120;

describe("a live writer rewriting a document in place", () => {
  const dir = mkdtempSync(join(tmpdir(), "live-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("ends with exact totals; torn reads are retried, never counted", async () => {
    const tree = makeTree(join(dir, "home"), [
      { id: "live", cwd: "/w", messages: [] },
      {
        id: "still",
        cwd: "/w",
        messages: [
          { id: "m", metrics: { inputTokens: 7, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 } },
        ],
      },
    ]);
    const ledger = Ledger.open(join(dir, "state"));
    const adapter = createClineAdapter(resolveClinePaths({}, {}, tree.home));
    const writer = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "test/reliability/live-writer-child.ts"),
        join(tree.sessionsDir, "live", "live.messages.json"),
        "live",
        String(REWRITES),
        "60000",
      ],
      { cwd: ROOT, stdio: "inherit" },
    );
    let running = true;
    const exited = once(writer, "exit").then(() => {
      running = false;
    });
    let passes = 0;
    let torn = 0;
    let read = 0;
    while (running) {
      const r = await runPass(adapter, ledger);
      passes++;
      torn += r.failed;
      read += r.read;
      for (const p of r.problems) expect(["partial-document", "changed-during-read"]).toContain(p.code);
      // An unchanged pass is all microtasks: yield so the writer's exit can be seen.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await exited;
    const last = await runPass(adapter, ledger);
    expect(last.failed).toBe(0);
    const t = ledger.report.groupedEvents([])[0];
    let input = 7;
    let output = 7;
    let cacheRead = 0;
    for (let i = 0; i < REWRITES; i++) {
      input += 1000 + i - i; // subset rule: inputTokens - cacheRead
      output += i + 1;
      cacheRead += i;
    }
    expect(t).toMatchObject({ events: REWRITES + 1, input, output, cacheRead });
    ledger.close();
    process.stdout.write(`live writer: ${passes} passes, ${read} reads, ${torn} torn reads retried\n`);
    expect(passes).toBeGreaterThan(100);
  }, 120_000);
});
