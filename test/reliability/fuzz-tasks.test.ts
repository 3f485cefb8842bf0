/**
 * Hostile input to the task-format reader (issue 28, item 3), as fuzz-collector.test.ts does for
 * the sessions: every shape of `ui_messages.json`, `task_metadata.json` and `state/taskHistory.json`
 * (objects, scalars, nulls, wrong field types, torn files, NaN/Infinity/1e300/negative/fractional/
 * string counts, invalid escapes and bytes, deep nesting, a directory or a symlink loop where a file
 * belongs, a 60 MB request text) in one task of a root beside good tasks. Each case, over two passes
 * (a torn file is retried once): no crash, no `internal` problem, no hostile number in the ledger,
 * the good tasks counted exactly, nothing under the root created or changed.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { MAX_TS_MS } from "../../src/adapter/timing.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import {
  ANTHROPIC,
  type Counts,
  countTexts,
  encode,
  goodTaskMessages,
  hugeRequestText,
  requestEntry,
  sumCounts,
} from "../helpers/task-fuzz.ts";
import {
  BAD_ID,
  type Content,
  GOOD_IDS,
  type GoodTask,
  goodArb,
  goodHistory,
  HISTORIES,
  hostileDocument,
  METAS,
  NOT_JSON_TS,
  SHAPES,
  specArb,
} from "../helpers/task-fuzz-cases.ts";
import { treeFingerprint } from "../helpers/tree-hash.ts";

interface Case {
  readonly ui: Content;
  readonly meta?: Content;
  readonly history?: (good: readonly GoodTask[]) => Content;
  /** Per `agent|ts`: the counts a valid entry of the hostile document holds (a counted event must be one). */
  readonly allowed?: ReadonlyMap<string, readonly Counts[]>;
  /**
   * The hostile task's `ui_messages.json` is a whole document: whatever its neighbours, it is read
   * within the two passes (a torn task_metadata.json fails one read, never every read).
   */
  readonly whole?: boolean;
  /** The hostile task's sums when it is exactly known (its own files are good). */
  readonly badSums?: Counts & { readonly events: number };
}

const base = mkdtempSync(join(tmpdir(), "fuzz-tasks-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function put(path: string, c: Content): void {
  if (c === undefined) return;
  if (c === "dir") mkdirSync(path);
  else if (c === "loop") {
    symlinkSync(`${path}.loop`, path);
    symlinkSync(path, `${path}.loop`);
  } else writeFileSync(path, c);
}

/** Runs of the two properties: bounded for CI (each run is a root, two passes and two tree hashes). */
const RUNS_SHAPES = 200;
const RUNS_BYTES = 100;

const stats = { cases: 0, badRead: 0, badFailed: 0, badEvents: 0, problems: new Map<string, number>() };

/**
 * Runs two passes over a root holding the good tasks and the case, into `ledger` (shared by the
 * runs of a test: each run's root is its own, and so are its keys); asserts every invariant.
 */
async function check(ledger: Ledger, good: readonly GoodTask[], c: Case): Promise<void> {
  stats.cases++;
  const dir = mkdtempSync(join(base, "r"));
  try {
    const root = join(dir, "data");
    for (const [i, t] of good.entries()) {
      mkdirSync(join(root, "tasks", t.id), { recursive: true });
      writeFileSync(
        join(root, "tasks", t.id, "ui_messages.json"),
        encode(goodTaskMessages(1_796_000_100_000 + 1000 * i, t.requests)),
      );
    }
    const badDir = join(root, "tasks", BAD_ID);
    mkdirSync(badDir, { recursive: true });
    put(join(badDir, "ui_messages.json"), c.ui);
    put(join(badDir, "task_metadata.json"), c.meta);
    mkdirSync(join(root, "state"));
    put(join(root, "state", "taskHistory.json"), (c.history ?? goodHistory)(good));
    const before = treeFingerprint(root);

    const adapter = createClineTasksAdapter([
      { path: root, client: "cli", product: "fuzz", foundBy: "test" },
    ]);
    let badRead = false;
    for (let pass = 0; pass < 2; pass++) {
      const r = await runPass(adapter, ledger);
      for (const p of r.problems) {
        expect(p.code, `${p.code}: ${p.detail}`).not.toBe("internal");
        expect(p.path.startsWith(root)).toBe(true);
        stats.problems.set(p.code, (stats.problems.get(p.code) ?? 0) + 1);
      }
      badRead ||= ledger.getCheckpoint(join(badDir, "ui_messages.json")) !== undefined;
    }
    if (badRead) stats.badRead++;
    else stats.badFailed++;
    if (c.whole === true) expect(badRead, "a whole ui_messages.json is read within two passes").toBe(true);

    const sums = new Map<string, Counts & { events: number }>();
    let bad = { events: 0, ...sumCounts([]) };
    for (const row of ledger.iterateEvents()) {
      if (!(row.source_path as string).startsWith(`${root}${sep}`)) continue;
      for (const k of ["input", "output", "cache_read", "cache_write", "total"]) {
        const v = row[k];
        expect(typeof v === "number" && Number.isSafeInteger(v) && v >= 0, `${k} ${String(v)}`).toBe(true);
      }
      const ts = row.ts_ms as number;
      expect(Number.isSafeInteger(ts) && ts > 0 && ts <= MAX_TS_MS, `ts ${ts}`).toBe(true);
      const cost = row.recorded_cost;
      expect(cost === null || (typeof cost === "number" && Number.isFinite(cost) && cost >= 0)).toBe(true);
      const counts: Counts = {
        tokensIn: row.input as number,
        tokensOut: row.output as number,
        cacheReads: row.cache_read as number,
        cacheWrites: row.cache_write as number,
      };
      const session = row.session_id as string;
      if (session === BAD_ID) {
        stats.badEvents++;
        bad = { events: bad.events + 1, ...sumCounts([bad, counts]) };
        // Anthropic's rule: an event's components are its entry's counts as written.
        const key = `${row.agent as string}|${row.message_id as string}`;
        if (c.allowed !== undefined)
          expect(c.allowed.get(key) ?? [], `event ${key}: counts of no valid entry`).toContainEqual(counts);
        continue;
      }
      const s = sums.get(session) ?? { events: 0, ...sumCounts([]) };
      sums.set(session, { events: s.events + 1, ...sumCounts([s, counts]) });
    }
    if (c.badSums !== undefined) expect(bad).toEqual(c.badSums);
    expect(sums).toEqual(
      new Map(good.map((t) => [t.id, { events: t.requests.length, ...sumCounts(t.requests) }])),
    );
    for (const s of ledger.toolSeries())
      for (const v of [s.calls, s.input, s.output, s.cacheRead, s.cacheWrite])
        expect(Number.isFinite(v) && v >= 0).toBe(true);
    expect(treeFingerprint(root)).toEqual(before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A ledger for one test's runs, outside every root. */
async function withLedger(name: string, body: (ledger: Ledger) => Promise<void>): Promise<void> {
  const ledger = Ledger.open(join(base, `ledger-${name}`));
  try {
    await body(ledger);
  } finally {
    ledger.close();
  }
}

describe("fuzzing the task-format reader", () => {
  it("the issue's case: a ui_messages.json holding an object is reported, the others count", async () => {
    const good = [
      { id: GOOD_IDS[0] as string, requests: [{ tokensIn: 3, tokensOut: 4, cacheReads: 5, cacheWrites: 6 }] },
    ];
    await withLedger("issue", (ledger) => check(ledger, good, { ui: Buffer.from('{"not": "an array"}') }));
    // Read once, with its problem; the second pass finds it unchanged.
    expect(stats.problems.get("not-a-task-document")).toBe(1);
  });

  for (const file of ["ui", "meta", "history"] as const)
    for (const what of ["dir", "loop"] as const)
      it(`a ${what === "dir" ? "directory" : "symlink loop"} where ${file} belongs`, async () => {
        const good = [
          {
            id: GOOD_IDS[0] as string,
            requests: [{ tokensIn: 1, tokensOut: 2, cacheReads: 3, cacheWrites: 4 }],
          },
        ];
        const ui = encode(
          goodTaskMessages(1_796_000_000_000, [{ tokensIn: 9, tokensOut: 9, cacheReads: 9, cacheWrites: 9 }]),
        );
        // The hostile task's own messages are good: beside a broken neighbour file it counts exactly.
        const badSums = { events: 1, tokensIn: 9, tokensOut: 9, cacheReads: 9, cacheWrites: 9 };
        const c: Case =
          file === "ui"
            ? { ui: what }
            : file === "meta"
              ? { ui, meta: what, whole: true, badSums }
              : { ui, history: () => what, whole: true, badSums };
        await withLedger(`${file}-${what}`, (ledger) => check(ledger, good, c));
      });

  it("a valid 60 MB request text inside an api_req_started is crossed and its counts counted", async () => {
    const chunk = 'line "quoted" \\ C:\\dir \u00e9\u2603 {"tokensIn": 1} \n';
    const request = hugeRequestText(chunk, 60 * 1024 * 1024);
    const big: Counts = { tokensIn: 123_456, tokensOut: 789, cacheReads: 1011, cacheWrites: 1213 };
    const doc = [
      { ts: 1_796_000_000_000, type: "say", say: "task", text: "t", modelInfo: ANTHROPIC },
      requestEntry("1796000000010", countTexts(big), request),
      { ts: 1_796_000_000_011, type: "say", say: "text", text: "ok", modelInfo: ANTHROPIC },
    ];
    const bytes = encode(doc);
    expect(bytes.length).toBeGreaterThan(60 * 1024 * 1024);
    // The task itself is good: counted exactly, as the others.
    const good = [
      { id: GOOD_IDS[0] as string, requests: [{ tokensIn: 1, tokensOut: 2, cacheReads: 3, cacheWrites: 4 }] },
    ];
    const before = stats.badEvents;
    const allowed = new Map([["lead|1796000000010", [big]]]);
    await withLedger("60mb", (ledger) => check(ledger, good, { ui: bytes, allowed }));
    expect(stats.badEvents - before).toBe(1);
  }, 120_000);

  it("hostile documents of every shape beside good tasks: never a crash, an internal error or a hostile number", async () => {
    const ledger = Ledger.open(join(base, "ledger-shapes"));
    await fc
      .assert(
        fc.asyncProperty(
          goodArb,
          fc.array(specArb, { minLength: 0, maxLength: 24 }),
          fc.nat(SHAPES.length - 1),
          fc.nat(METAS.length - 1),
          fc.nat(HISTORIES.length - 1),
          // Now and then a ts that is not JSON at all (the whole document torn).
          fc.oneof(
            { weight: 9, arbitrary: fc.constant(null) },
            { weight: 1, arbitrary: fc.constantFrom(...NOT_JSON_TS) },
          ),
          async (good, specs, shape, meta, history, notJsonTs) => {
            const withTs = notJsonTs === null ? specs : [...specs, { k: "badts" as const, ts: notJsonTs }];
            const { doc, allowed } = hostileDocument(withTs);
            const [make, whole] = SHAPES[shape] as (typeof SHAPES)[number];
            await check(ledger, good, {
              ui: make(encode(doc)),
              meta: METAS[meta],
              history: HISTORIES[history],
              allowed,
              whole: whole === true || (whole === "doc" && notJsonTs === null),
            });
          },
        ),
        { numRuns: RUNS_SHAPES, seed: 20261203 },
      )
      .finally(() => ledger.close());
  }, 300_000);

  it("byte-level damage to a hostile document: torn, flipped, spliced with NUL and invalid UTF-8", async () => {
    const ledger = Ledger.open(join(base, "ledger-bytes"));
    await fc
      .assert(
        fc.asyncProperty(
          goodArb,
          fc.array(specArb, { minLength: 1, maxLength: 12 }),
          fc.nat(3),
          fc.nat(1_000_000),
          async (good, specs, kind, r) => {
            const d = encode(hostileDocument(specs).doc);
            let ui: Buffer;
            if (kind === 0) ui = d.subarray(0, r % (d.length + 1));
            else if (kind === 1) {
              ui = Buffer.from(d);
              for (let i = 0; i < 1 + (r % 5); i++) {
                const at = (r * (i + 7919)) % ui.length;
                ui[at] = ((ui[at] as number) ^ (1 << (i % 8))) & 0xff;
              }
            } else if (kind === 2) {
              const at = r % d.length;
              ui = Buffer.concat([
                d.subarray(0, at),
                Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x5c]),
                d.subarray(at),
              ]);
            } else {
              // A backslash before a byte: an invalid escape wherever it lands.
              const at = r % d.length;
              ui = Buffer.concat([d.subarray(0, at), Buffer.from("\\"), d.subarray(at)]);
            }
            // The bytes may now spell other valid counts: only the invariants hold, not the mapping.
            await check(ledger, good, { ui });
          },
        ),
        { numRuns: RUNS_BYTES, seed: 28 },
      )
      .finally(() => ledger.close());
  }, 300_000);

  it("met every outcome", () => {
    process.stdout.write(
      `fuzz-tasks: ${JSON.stringify({ ...stats, problems: Object.fromEntries([...stats.problems].sort()) })}\n`,
    );
    // The hostile task was both read and refused, and some of its entries counted: the generators reach deep.
    expect(stats.badRead).toBeGreaterThan(50);
    expect(stats.badFailed).toBeGreaterThan(20);
    expect(stats.badEvents).toBeGreaterThan(50);
    for (const code of [
      "not-a-task-document",
      "invalid-counts",
      "invalid-request-entry",
      "invalid-subagent-usage",
      "missing-ts",
      "partial-document",
      "not-a-file",
      "unreadable",
      "task-metadata-partial",
      "task-metadata-unreadable",
      "not-a-task-history",
      "invalid-history-entry",
      "history-unreadable",
    ])
      expect(stats.problems.get(code) ?? 0, code).toBeGreaterThan(0);
  });
});
