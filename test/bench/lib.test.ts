/** The benchmark's helpers: statistics, the table, the command line and the corpus generator. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mbPerThousand, measureScale } from "../../bench/cases/scale.ts";
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
import { taskDoc } from "../../bench/lib/task-corpus.ts";
import { statWalk } from "../../bench/lib/walk.ts";

interface Block {
  type: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  is_error?: boolean;
  content?: unknown;
}

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

describe("the CPU probe (bench/lib/rss-probe.mjs)", () => {
  it("reports the main thread's CPU apart from the process's", () => {
    const dir = mkdtempSync(join(tmpdir(), "probe-"));
    try {
      const out = join(dir, "probe.jsonl");
      // A worker thread spins 250 ms of its own CPU (not of wall time: a loaded machine gives a
      // thread less CPU than wall time) while the main thread only waits for it.
      const script = [
        'const { Worker } = require("node:worker_threads");',
        "const spin = 'const t = process.threadCpuUsage(); for (;;) { const u = process.threadCpuUsage(t); if (u.user + u.system >= 250000) break; }';",
        "const w = new Worker(spin, { eval: true });",
        'w.on("exit", () => {});',
      ].join("\n");
      execFileSync(
        process.execPath,
        ["--import", join(import.meta.dirname, "..", "..", "bench", "lib", "rss-probe.mjs"), "-e", script],
        {
          env: { ...process.env, CLINE_OTEL_BENCH_PROBE: out },
        },
      );
      const p = JSON.parse(readFileSync(out, "utf8").trim()) as {
        maxRssKB: number;
        cpuMs: number;
        mainCpuMs: number;
      };
      expect(p.maxRssKB).toBeGreaterThan(0);
      expect(p.mainCpuMs).toBeGreaterThan(0);
      expect(p.cpuMs - p.mainCpuMs).toBeGreaterThan(200);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the CPU probe on a Node without process.threadCpuUsage", () => {
  it("reports no main-thread figure (null), not the process's", () => {
    const dir = mkdtempSync(join(tmpdir(), "probe-"));
    try {
      const out = join(dir, "probe.jsonl");
      execFileSync(
        process.execPath,
        [
          "--import",
          join(import.meta.dirname, "..", "..", "bench", "lib", "rss-probe.mjs"),
          "-e",
          "process.threadCpuUsage = undefined;",
        ],
        { env: { ...process.env, CLINE_OTEL_BENCH_PROBE: out } },
      );
      const p = JSON.parse(readFileSync(out, "utf8").trim()) as { cpuMs: number; mainCpuMs: number | null };
      expect(p.cpuMs).toBeGreaterThan(0);
      expect(p.mainCpuMs).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
      "240",
    ]);
    expect(cli.baseBin).toBe("/tmp/base/bin/cline-otel.js");
    expect(cli.sizes.daemonSeconds).toBe(240);
    expect(parseCommandLine(["--quick", "--daemon-seconds", "20"]).sizes).toEqual({
      ...QUICK,
      daemonSeconds: 20,
    });
    expect(() => parseCommandLine(["--daemon-seconds", "1.5"])).toThrow(/whole number/);
    expect(() => parseCommandLine(["--daemon-seconds=-1"])).toThrow(/whole number/);
    expect(parseCommandLine(["--daemon-seconds", "0"]).sizes.daemonSeconds).toBe(0);
  });

  it("takes the ratios case's corpora, in their own order", () => {
    expect(parseCommandLine(["ratios"]).corpora).toBeUndefined();
    expect(parseCommandLine(["ratios", "--corpora", "small"]).corpora).toEqual(["small"]);
    expect(parseCommandLine(["ratios", "--corpora", "large, small"]).corpora).toEqual(["small", "large"]);
    expect(() => parseCommandLine(["ratios", "--corpora", "small,nope"])).toThrow(/--corpora/);
    expect(() => parseCommandLine(["ratios", "--corpora", ""])).toThrow(/--corpora/);
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

  it("writes edits and commits as the real CLI stores them, and counts them exactly", () => {
    const kinds = new Set<string>();
    let applied = 0;
    let denied = 0;
    let failed = 0;
    let commits = 0;
    for (const d of corpus.docs) {
      const doc = JSON.parse(readFileSync(d.spec.path, "utf8")) as { messages: Msg[] };
      const uses = new Map<string, Block>();
      for (const m of doc.messages)
        for (const b of m.content as Block[]) {
          if (b.type === "tool_use") uses.set(b.id as string, b);
          if (b.type !== "tool_result") continue;
          const use = uses.get(b.tool_use_id as string) as Block;
          const input = use.input as Record<string, unknown>;
          if (use.name === "editor" || use.name === "apply_patch") {
            // Cline CLI 3.x's editor input (docs/cline-format.md §16.1): never `command` / `file_text`.
            expect(input.command).toBeUndefined();
            expect(input.file_text).toBeUndefined();
            if (use.name === "apply_patch") {
              kinds.add("patch");
              expect(input.input).toMatch(/^\*\*\* Begin Patch\n\*\*\* Update File: .*\*\*\* End Patch$/s);
            } else {
              expect(typeof input.path).toBe("string");
              expect(typeof input.new_text).toBe("string");
              kinds.add(
                input.insert_line !== undefined
                  ? "insert"
                  : input.old_text !== undefined
                    ? "replace"
                    : "create",
              );
            }
            // The result is a JSON string: success, a failure without is_error, or a denial with it.
            const r = JSON.parse(b.content as string) as { success?: boolean; error?: string };
            if (b.is_error === true) {
              denied++;
              expect(r.error).toMatch(/rejected by the user/);
            } else if (r.success === false) failed++;
            else applied++;
          }
          if (use.name === "run_commands" && b.is_error !== true) {
            const cmds = input.commands as string[];
            expect((b.content as unknown[]).length).toBe(cmds.length);
            if (cmds.some((c) => c.includes("git commit"))) commits++;
          }
        }
    }
    const sum = (k: "applied" | "denied" | "failed") => corpus.docs.reduce((a, d) => a + d.stats.edits[k], 0);
    expect([applied, denied, failed]).toEqual([sum("applied"), sum("denied"), sum("failed")]);
    expect(commits).toBe(corpus.docs.reduce((a, d) => a + d.stats.commits, 0));
    expect([...kinds].sort()).toEqual(["create", "insert", "patch", "replace"]);
    expect(denied).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    expect(commits).toBeGreaterThan(0);
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

describe("task corpus", () => {
  interface UiMsg {
    ts: number;
    type: string;
    say?: string;
    ask?: string;
    text?: string;
  }
  const msgs = (t: number, n?: number): UiMsg[] => JSON.parse(taskDoc(t, n)) as UiMsg[];

  it("writes edits as the legacy core does, each answered by the next request", () => {
    const doc = msgs(0);
    const edits = doc.filter((m) => (m.say ?? m.ask) === "tool" && /Created|Existing/.test(m.text ?? ""));
    const bodies = edits.map(
      (m) => JSON.parse(m.text as string) as { tool: string; path: string; content: string },
    );
    expect(new Set(edits.map((m) => m.type))).toEqual(new Set(["say", "ask"]));
    expect(new Set(bodies.map((b) => b.tool))).toEqual(new Set(["newFileCreated", "editedExistingFile"]));
    for (const b of bodies)
      if (b.tool === "editedExistingFile")
        expect(b.content).toMatch(/^------- SEARCH\n.*\n=======\n.*\n\+\+\+\+\+\+\+ REPLACE$/s);
    const requests = doc
      .filter((m) => m.say === "api_req_started")
      .map((m) => JSON.parse(m.text as string).request);
    // Every request after the first answers the edit of the one before it (when it made one).
    for (const b of bodies.slice(0, -1))
      expect(requests.some((r: string) => r.includes(`for '${b.path}'] Result:`))).toBe(true);
  });

  it("denies some asked edits and commits in every fifth task, deterministically", () => {
    let denials = 0;
    for (let t = 0; t < 40; t++)
      for (const m of msgs(t))
        if (m.say === "api_req_started")
          denials += (m.text?.match(/The user denied this operation/g) ?? []).length;
    expect(denials).toBeGreaterThan(0);
    const commit = (t: number) =>
      msgs(t).filter((m) => m.ask === "command" && m.text?.includes("git commit"));
    expect(commit(0)).toHaveLength(1);
    expect(commit(5)).toHaveLength(1);
    expect(commit(1)).toHaveLength(0);
    expect(taskDoc(3)).toBe(taskDoc(3));
    // A rewrite with one request more keeps every request before the last two as it was.
    expect(msgs(1, 13).slice(0, 20)).toEqual(msgs(1, 12).slice(0, 20));
  });

  it("ends a quiet task right after its last request, and differs from the default only there", () => {
    const quiet = JSON.parse(taskDoc(4, 12, true)) as UiMsg[];
    const open = msgs(4, 12);
    expect(quiet.slice(0, -1)).toEqual(open.slice(0, -1));
    const lastRequest = Math.max(...open.filter((m) => m.say === "api_req_started").map((m) => m.ts));
    expect(quiet.at(-1)).toMatchObject({ ask: "completion_result", ts: lastRequest + 6 });
    expect(open.at(-1)?.ts).toBe(2_000_000_000_000);
    expect(Math.max(...quiet.map((m) => m.ts))).toBe(lastRequest + 6);
  });
});

/**
 * A bench patch's text and the files it changes, after `git apply --check`: every hunk must match the
 * working tree, or the case cannot build its patched build (bench/lib/patched-build.ts).
 */
function benchPatch(name: string): { readonly text: string; readonly files: string[] } {
  const root = join(import.meta.dirname, "..", "..");
  const patch = join(root, "bench", "lib", name);
  execFileSync("git", ["apply", "--check", patch], { cwd: root, stdio: "pipe" });
  const text = readFileSync(patch, "utf8");
  return { text, files: [...text.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1] as string).sort() };
}

describe("counting-off patch (the delivered case's before build)", () => {
  it("still applies to this tree's sources, and touches only the two adapters", () => {
    expect(benchPatch("counting-off.patch").files).toEqual([
      "src/adapter/cline-tasks/parser.ts",
      "src/adapter/cline-tasks/schema.ts",
      "src/adapter/cline/parser.ts",
      "src/adapter/cline/schema.ts",
    ]);
  });
});

describe("storage-off patch (the floor build of docs/performance.md, 'The cold report's floor')", () => {
  it("still applies to this tree's sources, and touches only the ledger's ingest", () => {
    const { text, files } = benchPatch("storage-off.patch");
    expect(files).toEqual(["src/ledger/usage/ingest.ts"]);
    // It stores nothing: the early return is the whole change, and it is taken.
    expect(text).toMatch(/^\+const STORING_OFF = true;$/m);
    expect(text).toMatch(/^\+ {4}if \(STORING_OFF\) return/m);
  });
});

describe("the scale case (bench/cases/scale.ts)", () => {
  it("mbPerThousand: the peak's growth between the first and the last size", () => {
    const run = (sessions: number, onceRssMB: number) => ({
      sessions,
      documents: sessions,
      onceRssMB,
      onceMs: 1,
    });
    expect(mbPerThousand([run(10_000, 185), run(30_000, 245)])).toBeCloseTo(3, 9);
    expect(mbPerThousand([run(10_000, 185)])).toBeUndefined();
    expect(mbPerThousand([])).toBeUndefined();
  });

  it("measures each size's first export and the idle daemon over the last, with the built CLI", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "bench-scale-"));
    try {
      const m = await measureScale(tmp, { ...QUICK, scaleSessions: [20, 60], daemonSeconds: 1 });
      expect(m.runs.map((r) => r.sessions)).toEqual([20, 60]);
      for (const r of m.runs) {
        expect(r.documents).toBeGreaterThanOrEqual(r.sessions);
        expect(r.onceRssMB).toBeGreaterThan(20);
      }
      expect(m.daemon).toMatchObject({ sessions: 60, seconds: 1 });
      expect(m.daemon.peakRssMB).toBeGreaterThan(20);
      expect(m.walkMs).toBeGreaterThan(0);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);
});
