/**
 * Hostile input, derived from documents the real CLI wrote: truncations, byte flips,
 * NULs, BOMs, deep nesting, duplicate keys, wrong types and absurd numbers. Never a
 * crash or a hang; a counted problem naming the file; no NaN or negative number in
 * the ledger; other sources unaffected.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { parseMessagesDocument } from "../../src/adapter/cline/parser.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { messagesDocumentSchema } from "../../src/adapter/cline/schema.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { ScanError, scanBuffer } from "../../src/scan/scanner.ts";
import { ROOT } from "../helpers/cli.ts";
import { makeTree } from "../helpers/cline-tree.ts";

function realDocuments(): Buffer[] {
  const out: Buffer[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".messages.json")) out.push(readFileSync(p));
    }
  };
  walk(join(ROOT, "fixtures", "cline"));
  return out;
}

const SEEDS = realDocuments();

/** Text-level mutations that keep a document plausible, so the parser goes deep. */
const MUTATIONS: ((s: string, r: number) => string)[] = [
  (s, r) =>
    s.replace(
      /"inputTokens": \d+/,
      `"inputTokens": ${["-5", "1.5", "1e400", "18014398509481984", '"12"', "null", "true", "{}", "[1]"][r % 9]}`,
    ),
  (s, r) =>
    s.replace(/"outputTokens": \d+/, `"outputTokens": ${["-1", "0.25", "9007199254740993", '"x"'][r % 4]}`),
  (s) => s.replace(/"cacheReadTokens": \d+,?/, ""),
  (s) => s.replace(/"metrics": \{/, '"metrics": { "inputTokens": 1, '),
  (s) => s.replace(/"type": "tool_use"/, '"type": "hologram"'),
  (s) => s.replace(/"role": "assistant"/, '"role": 7'),
  (s) => s.replace(/"id": "msg_/, '"id": 42, "x": "msg_'),
  (s) => s.replace(/"messages": \[/, '"messages": {"a": ['),
  (s, r) => `${"[".repeat(1000 + r)}${s}${"]".repeat(1000 + r)}`,
  (s) => `\uFEFF${s}`,
  (s) => s.replace(/"content": \[/, '"content": "'),
  (s) => s.replace(/"sessionId": "/, '"sessionId": "\u0000'),
  (s) => s.replace(/"agent": "lead"/, '"agent": ["lead"]'),
  (s) => s.replace(/"modelInfo": \{/, '"modelInfo": null, "zz": {'),
];

function mutate(seed: Buffer, kind: number, r: number): Buffer {
  switch (kind) {
    case 0: // truncation at an arbitrary byte offset
      return seed.subarray(0, r % (seed.length + 1));
    case 1: {
      // random byte flips
      const b = Buffer.from(seed);
      for (let i = 0; i < 1 + (r % 5); i++) {
        const at = (r * (i + 7919)) % b.length;
        b.writeUInt8((b.readUInt8(at) ^ (1 << (i % 8))) & 0xff, at);
      }
      return b;
    }
    case 2: {
      // invalid UTF-8 and NUL bytes spliced in
      const at = r % seed.length;
      return Buffer.concat([seed.subarray(0, at), Buffer.from([0xff, 0x00, 0xc3, 0x28]), seed.subarray(at)]);
    }
    default: {
      const m = MUTATIONS[(kind - 3) % MUTATIONS.length] as (s: string, r: number) => string;
      return Buffer.from(m(seed.toString("utf8"), r));
    }
  }
}

const KINDS = 3 + MUTATIONS.length;
const dir = mkdtempSync(join(tmpdir(), "fuzz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fuzzing the collector", () => {
  it("has real-CLI documents to derive inputs from", () => {
    expect(SEEDS.length).toBeGreaterThan(10);
  });

  it("10,000 hostile documents: never a crash, never a bad number in the ledger", () => {
    const ledger = Ledger.open(join(dir, "state"));
    const stats = { inputs: 0, scanErrors: 0, documents: 0, problems: 0, events: 0, eventsAdded: 0 };
    fc.assert(
      fc.property(fc.nat(SEEDS.length - 1), fc.nat(KINDS - 1), fc.nat(1_000_000), (seedIndex, kind, r) => {
        stats.inputs++;
        const input = mutate(SEEDS[seedIndex] as Buffer, kind, r);
        const path = `/fuzz/s${stats.inputs}/s${stats.inputs}.messages.json`;
        let scanned: ReturnType<typeof scanBuffer<typeof messagesDocumentSchema>>;
        try {
          scanned = scanBuffer(input, messagesDocumentSchema);
        } catch (e) {
          // The only acceptable failure is a typed scan error (retried next pass as a problem).
          expect(e).toBeInstanceOf(ScanError);
          stats.scanErrors++;
          return;
        }
        stats.documents++;
        const parsed = parseMessagesDocument(scanned, path, { project: "/p" });
        for (const p of parsed.problems) expect(p.path).toBe(path);
        stats.problems += parsed.problems.length;
        for (const e of parsed.events) {
          for (const v of [e.input, e.output, e.cacheRead, e.cacheWrite, e.total]) {
            expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
          }
        }
        const source = { adapterId: "cline", path, origin: "walk" as const, hint: {} };
        const r2 = ledger.commit({
          status: "read",
          source,
          checkpoint: { path, size: input.length, mtimeNs: "1", ino: 1, dev: 1 },
          events: parsed.events,
          toolCalls: parsed.toolCalls,
          problems: parsed.problems,
        });
        stats.events += parsed.events.length;
        stats.eventsAdded += r2.eventsAdded;
      }),
      { numRuns: 10_000, seed: 20261130 },
    );
    for (const row of ledger.iterateEvents()) {
      for (const k of ["input", "output", "cache_read", "cache_write", "total"]) {
        const v = row[k];
        expect(typeof v === "number" && Number.isSafeInteger(v) && v >= 0).toBe(true);
      }
    }
    ledger.close();
    writeFileSync(join(dir, "stats.json"), JSON.stringify(stats));
    process.stdout.write(`fuzz: ${JSON.stringify(stats)}\n`);
    expect(stats.inputs).toBe(10_000);
    // Both outcomes must really occur, or the mutations are not doing their job.
    expect(stats.scanErrors).toBeGreaterThan(1000);
    expect(stats.problems).toBeGreaterThan(100);
    expect(stats.events).toBeGreaterThan(1000);
  }, 300_000);

  it("a hostile document next to good ones: it fails or counts, the others always count", async () => {
    const tree = makeTree(join(dir, "home"), [
      {
        id: "good1",
        cwd: "/g",
        messages: [
          { id: "a", metrics: { inputTokens: 3, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } },
        ],
      },
      { id: "bad", cwd: "/b", messages: [] },
      {
        id: "good2",
        cwd: "/g",
        messages: [
          { id: "a", metrics: { inputTokens: 4, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } },
        ],
      },
    ]);
    const adapter = createClineAdapter(resolveClinePaths({}, {}, tree.home));
    const badPath = join(tree.sessionsDir, "bad", "bad.messages.json");
    await fc.assert(
      fc.asyncProperty(fc.nat(SEEDS.length - 1), fc.nat(KINDS - 1), fc.nat(1_000_000), async (s, k, r) => {
        const ledger = Ledger.open(join(dir, `state-${s}-${k}-${r}`));
        try {
          writeFileSync(badPath, mutate(SEEDS[s] as Buffer, k, r));
          const pass = await runPass(adapter, ledger);
          expect(pass.read + pass.failed).toBe(3);
          for (const p of pass.problems)
            expect(p.path.startsWith(tree.sessionsDir) || p.path.startsWith(tree.dbDir)).toBe(true);
          const good = ledger.report.groupedEvents(["project"]).find((x) => x.project === "/g");
          expect(good).toMatchObject({ events: 2, input: 7 });
        } finally {
          ledger.close();
        }
      }),
      { numRuns: 150, seed: 7 },
    );
  }, 300_000);
});
