/** The benchmark's helpers: statistics, the table, the command line and the corpus generator. */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAllRaw } from "../../bench/lib/child.ts";
import {
  appendToDocument,
  bodyText,
  type Corpus,
  documentSizes,
  makeReservoir,
  writeCorpus,
} from "../../bench/lib/corpus.ts";
import { prng } from "../../bench/lib/messages-doc.ts";
import { CASES, parseCommandLine, QUICK } from "../../bench/lib/options.ts";
import { atLeast, atMost, renderTable } from "../../bench/lib/report.ts";
import { interleave, median, pairedRatio } from "../../bench/lib/stats.ts";
import { statWalk } from "../../bench/lib/walk.ts";

interface Msg {
  id: string;
  role: string;
  metrics?: unknown;
  content: { type: string; id?: string }[];
}

describe("statistics", () => {
  it("takes the median (upper middle for even counts) and refuses an empty sample", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(3);
    expect(() => median([])).toThrow(RangeError);
  });

  it("takes the median of per-round ratios", () => {
    expect(pairedRatio([10, 20, 300], [5, 5, 100])).toBe(3);
    expect(() => pairedRatio([1], [1, 2])).toThrow(RangeError);
  });

  it("runs every case warmup + reps times, rotating the order within a round", async () => {
    const order: string[] = [];
    const s = await interleave(
      { a: () => order.push("a"), b: () => order.push("b"), c: () => order.push("c") },
      { reps: 3, warmup: 1 },
    );
    expect(order.join("")).toBe("abc" + "abc" + "bca" + "cab");
    expect(s.a).toHaveLength(3);
    expect(s.c.every((x) => x >= 0)).toBe(true);
  });
});

describe("table", () => {
  it("judges targets and aligns columns", () => {
    expect(atLeast(3.1, 3)).toEqual({ target: ">= 3", ok: true });
    expect(atMost(2.5, 2)).toEqual({ target: "<= 2", ok: false });
    const t = renderTable([
      { case: "scan", measure: "m", value: "1 ms", ratio: 4, ratioOf: "a / b", ...atLeast(4, 3) },
      { case: "idle", measure: "longer measure", value: "10 ms", ...atMost(5, 2) },
    ]).split("\n");
    expect(t).toHaveLength(4);
    expect(t[2]).toContain("4.00 (a / b)");
    expect(t[2]?.endsWith("yes")).toBe(true);
    expect(t[3]?.endsWith("MISSED")).toBe(true);
    expect(t[0]?.indexOf("measure")).toBe(t[3]?.indexOf("longer measure"));
  });
});

describe("command line", () => {
  it("selects cases, sizes and repetitions", () => {
    expect(parseCommandLine([]).cases).toEqual([...CASES]);
    expect(parseCommandLine(["huge", "scan"]).cases).toEqual(["scan", "huge"]);
    expect(parseCommandLine(["--quick"]).sizes).toEqual(QUICK);
    expect(parseCommandLine(["--reps", "2"]).sizes.idleReps).toBe(2);
    expect(() => parseCommandLine(["nope"])).toThrow(/unknown case/);
    expect(() => parseCommandLine(["--reps", "0"])).toThrow(/positive integer/);
  });

  it("takes a base build's bin and the daemons' measuring time", () => {
    expect(parseCommandLine(["ratios"]).baseBin).toBeUndefined();
    const cli = parseCommandLine([
      "ratios",
      "--base-bin",
      "/tmp/base/bin/cline-otel.js",
      "--daemon-seconds",
      "180",
    ]);
    expect(cli.baseBin).toBe("/tmp/base/bin/cline-otel.js");
    expect(cli.sizes.daemonSeconds).toBe(180);
    expect(parseCommandLine(["--quick", "--daemon-seconds", "20"]).sizes).toEqual({
      ...QUICK,
      daemonSeconds: 20,
    });
    expect(() => parseCommandLine(["--daemon-seconds", "1.5"])).toThrow(/positive integer/);
  });
});

describe("corpus generator", () => {
  let dir = "";
  let corpus: Corpus;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "bench-corpus-"));
    corpus = writeCorpus(join(dir, "home"), {
      sessions: 12,
      totalBytes: 3 * 1024 * 1024,
      subagentShare: 0.5,
      unindexedShare: 0.25,
      seed: 9,
    });
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("draws heavy-tailed sizes that add up to the total, capped", () => {
    const sizes = documentSizes(prng(1), 200, 50e6, 1.6, 2e6);
    const sum = sizes.reduce((a, b) => a + b, 0);
    expect(sum).toBeGreaterThan(45e6);
    expect(sum).toBeLessThan(55e6);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2e6);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(4096);
  });

  it("cuts bodies on line boundaries", () => {
    const res = makeReservoir(prng(2), 100_000);
    const b = bodyText(res, prng(3), 5000);
    expect(b.length).toBeGreaterThanOrEqual(5000);
    expect(res.includes(b)).toBe(true);
    expect(b.endsWith("\n")).toBe(false);
  });

  it("writes valid documents whose events and tool calls it reports exactly", () => {
    let events = 0;
    let uses = 0;
    for (const d of corpus.docs) {
      const text = readFileSync(d.spec.path, "utf8");
      expect(Buffer.byteLength(text)).toBe(d.stats.bytes);
      expect(text.endsWith("}\n")).toBe(true);
      const doc = JSON.parse(text) as {
        sessionId: string;
        agent: string;
        messages: Msg[];
        system_prompt?: string;
      };
      expect(doc.sessionId).toBe(d.spec.sessionId);
      expect(doc.agent).toBe(d.spec.agent);
      expect(doc.system_prompt !== undefined).toBe(d.spec.agent === "lead");
      expect(doc.messages).toHaveLength(d.stats.messages);
      expect(new Set(doc.messages.map((m) => m.id)).size).toBe(doc.messages.length);
      const withMetrics = doc.messages.filter((m) => m.role === "assistant" && m.metrics !== undefined);
      expect(withMetrics).toHaveLength(d.stats.events);
      const toolUses = doc.messages.flatMap((m) => m.content.filter((b) => b.type === "tool_use"));
      expect(toolUses).toHaveLength(d.stats.toolUses);
      // One tool-result message per call.
      const results = doc.messages.flatMap((m) => m.content.filter((b) => b.type === "tool_result"));
      expect(results).toHaveLength(toolUses.length);
      events += d.stats.events;
      uses += d.stats.toolUses;
    }
    expect(corpus.events).toBe(events);
    expect(corpus.toolUses).toBe(uses);
    expect(corpus.docs.some((d) => d.spec.agent !== "lead")).toBe(true);
  });

  it("indexes most sessions, with sidecars for every root", () => {
    const db = new Database(join(corpus.tree.dbDir, "sessions.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT session_id, messages_path FROM sessions").all() as {
        session_id: string;
        messages_path: string;
      }[];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThan(corpus.docs.length);
      for (const r of rows) expect(statSync(r.messages_path).isFile()).toBe(true);
    } finally {
      db.close();
    }
    for (const id of corpus.rootIds) {
      expect(statSync(join(corpus.tree.sessionsDir, id, `${id}.json`)).isFile()).toBe(true);
    }
  });

  it("appends exactly one event in place, keeping the old messages", () => {
    const k = corpus.docs.findIndex((d) => d.spec.agent === "lead");
    const before = corpus.docs[k];
    const ino = statSync(before?.spec.path as string).ino;
    const old = JSON.parse(readFileSync(before?.spec.path as string, "utf8")) as { messages: Msg[] };
    const total = corpus.events;
    const after = appendToDocument(corpus, k, 1);
    const now = JSON.parse(readFileSync(after.spec.path, "utf8")) as { messages: Msg[] };
    expect(now.messages.slice(0, old.messages.length)).toEqual(old.messages);
    expect(after.stats.events).toBe((before?.stats.events ?? 0) + 1);
    expect(corpus.events).toBe(total + 1);
    expect(statSync(after.spec.path).ino).toBe(ino);
  });

  it("walks and reads exactly the documents", () => {
    expect(statWalk(corpus.tree.sessionsDir)).toBe(corpus.docs.length);
    const raw = readAllRaw(corpus.tree.sessionsDir);
    expect(raw.documents).toBe(corpus.docs.length);
    expect(raw.bytes).toBe(corpus.docs.reduce((a, d) => a + statSync(d.spec.path).size, 0));
  });
});
