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
  COUNT_FIELDS,
  type Counts,
  countTexts,
  embedded,
  encode,
  goodTaskMessages,
  hugeRequestText,
  type Json,
  Outer,
  type RequestText,
  raw,
  requestEntry,
  sumCounts,
} from "../helpers/task-fuzz.ts";
import { treeFingerprint } from "../helpers/tree-hash.ts";

/** What stands where a file belongs: its bytes, a directory, a symlink loop, or nothing. */
type Content = Buffer | "dir" | "loop" | undefined;

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

interface GoodTask {
  readonly id: string;
  readonly requests: readonly Counts[];
}

/** The good tasks' ids sort on both sides of the hostile one. */
const GOOD_IDS = ["1796000000001", "1796000000003", "1796000000005"];
const BAD_ID = "1796000000002";

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

/** A valid taskHistory.json of the good tasks (their totals and cwd), the hostile task's entry hostile. */
function goodHistory(good: readonly GoodTask[], extra: readonly Json[] = []): Buffer {
  const entries: Json[] = good.map((t) => ({
    id: t.id,
    ts: 1,
    task: "the prompt",
    ...sumCounts(t.requests),
    totalCost: 0,
    cwdOnTaskInitialization: "/good",
  }));
  entries.push({ id: BAD_ID, tokensIn: raw('"12"'), tokensOut: raw("1e300"), cacheReads: -1 }, ...extra);
  return encode(entries);
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

// ---- generators

const countsArb: fc.Arbitrary<Counts> = fc.record({
  tokensIn: fc.nat(5_000_000),
  tokensOut: fc.nat(100_000),
  cacheReads: fc.nat(5_000_000),
  cacheWrites: fc.nat(1_000_000),
});

const goodArb: fc.Arbitrary<GoodTask[]> = fc
  .array(fc.array(countsArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: GOOD_IDS.length })
  .map((ts) => ts.map((requests, i) => ({ id: GOOD_IDS[i] as string, requests })));

/** Count values no reader may count: wrong types, fractions, negatives, beyond 2^53, and not JSON. */
const HOSTILE_COUNTS = [
  "-5",
  "-1",
  "1.5",
  "0.5",
  "-0.5",
  "1e300",
  "1e400",
  "-1e400",
  "1e-7",
  "9007199254740993",
  "18014398509481984",
  '"12"',
  '"1e3"',
  "null",
  "true",
  "false",
  "{}",
  "[1]",
  "[]",
  "NaN",
  "Infinity",
  "-Infinity",
  "00012",
  "+3",
  "0x10",
  "12abc",
];

/** A hostile `ts` (raw) and the message id a request with it may be counted under (null: none). */
const HOSTILE_TS: readonly (readonly [string, string | null])[] = [
  ["0", null],
  ["-1", null],
  ["1e300", null],
  ["1e400", null],
  ["8640000000000001", null],
  ["2.5", "2"],
  ['"1796000000000"', null],
  ["null", null],
  ["true", null],
  ["{}", null],
  ["[]", null],
];

/** Hostile ts that are not JSON at all: the document is torn (partial-document), never counted. */
const NOT_JSON_TS = ["NaN", "Infinity", "-Infinity", "1796000000000abc"];

const DEEP = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

/** Request texts: plain, escapes and quotes, NUL and control escapes, invalid bytes, deep nesting. */
const REQUEST_TEXTS: readonly RequestText[] = [
  "req",
  'say "hi" \\ C:\\dir\\ \u00e9\u2603 \ud83d\ude00 </tool> {"tokensIn": 99}',
  "\u0000\u0001\u001f\\\\\\",
  Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
  { inner: DEEP(20_000) },
  { inner: '{"tokensIn": 7, "nested": {"tokensOut": 8}}' },
];

type Spec =
  | { k: "req"; counts: Counts; omitCache: boolean; text: number; escapedSay: boolean }
  | { k: "hreq"; counts: Counts; field: (typeof COUNT_FIELDS)[number] | "cost"; value: string; text: number }
  | { k: "tsreq"; counts: Counts; ts: number }
  | { k: "badts"; ts: string }
  | { k: "sub"; counts: Counts }
  | { k: "hsub"; counts: Counts; field: (typeof COUNT_FIELDS)[number]; value: string }
  | { k: "other"; n: number }
  | { k: "junk"; n: number };

const specArb: fc.Arbitrary<Spec> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("req" as const),
      counts: countsArb,
      omitCache: fc.boolean(),
      text: fc.nat(REQUEST_TEXTS.length - 1),
      escapedSay: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("hreq" as const),
      counts: countsArb,
      field: fc.constantFrom(...COUNT_FIELDS, "cost" as const),
      value: fc.constantFrom(...HOSTILE_COUNTS),
      text: fc.nat(REQUEST_TEXTS.length - 1),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("tsreq" as const),
      counts: countsArb,
      ts: fc.nat(HOSTILE_TS.length - 1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("sub" as const), counts: countsArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("hsub" as const),
      counts: countsArb,
      field: fc.constantFrom(...COUNT_FIELDS),
      value: fc.constantFrom(...HOSTILE_COUNTS),
    }),
  },
  { weight: 4, arbitrary: fc.record({ k: fc.constant("other" as const), n: fc.nat(1000) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant("junk" as const), n: fc.nat(1000) }) },
);

/** Settled and partial messages around the requests: tools, commands, asks, texts. */
function other(ts: string, n: number): Json {
  const t = raw(ts);
  const all: Json[] = [
    { ts: t, type: "say", say: "text", text: "ok", modelInfo: ANTHROPIC },
    { ts: t, type: "say", say: "text", text: "streaming", partial: true },
    { ts: t, type: "say", say: "tool", text: embedded('{"tool":"readFile","path":"/secret","content":"x"}') },
    { ts: t, type: "say", say: "tool", text: embedded('{"tool":"madeUp"}') },
    { ts: t, type: "say", say: "command", text: "rm -rf / # never decoded" },
    { ts: t, type: "ask", ask: "completion_result", text: "" },
    { ts: t, type: "ask", ask: "followup", text: "?" },
    { ts: t, type: "ask", ask: "tool", text: embedded('{"tool":"editedExistingFile"}') },
    { ts: t, type: "say", say: "user_feedback", text: "more" },
    { ts: t, type: "say", say: "completion_result", text: "done" },
    { ts: t, type: "say", say: "subagent", text: embedded('{"status":"running"}'), partial: true },
  ];
  return all[n % all.length] as Json;
}

/** Messages of every wrong shape and field type. */
function junk(ts: string, n: number): Json {
  const t = raw(ts);
  const all: Json[] = [
    null,
    5,
    -1,
    "s",
    true,
    [],
    {},
    [null],
    raw(DEEP(50_000)),
    { ts: "x", type: "say", say: "api_req_started" },
    { ts: raw("1e400"), type: 7, say: ["api_req_started"] },
    { type: "say", say: "api_req_started", text: embedded('{"tokensIn":1,"tokensOut":1}') },
    { ts: t, type: "say", say: "api_req_started", text: 5 },
    { ts: t, type: "say", say: "api_req_started", text: "not json" },
    {
      ts: t,
      type: "say",
      say: "api_req_started",
      text: embedded(new Outer('{\\"tokensIn\\":1\\q,\\"tokensOut\\":1}')),
    },
    { ts: t, type: "say", say: "api_req_started", text: embedded(new Outer("\\ud800\\udc00\\ud800")) },
    {
      ts: t,
      type: "say",
      say: "api_req_started",
      text: embedded('{"tokensIn":1,"tokensOut":', Buffer.from([0xff]), "}"),
    },
    { ts: t, type: "say", say: "api_req_started", text: embedded(DEEP(20_000)) },
    { ts: t, type: "say", say: "api_req_started", text: embedded('[{"tokensIn":1,"tokensOut":1}]') },
    { ts: t, type: "say", say: "api_req_started", text: embedded('{"tokensIn":1,"tokensOut":1') },
    { ts: t, type: "say", say: "api_req_started", text: embedded('{"tokensIn":1,"tokensOut":1}{}') },
    { ts: t, type: "say", say: "text", modelInfo: { providerId: 5, modelId: null } },
    { ts: t, type: "say", say: "text", modelInfo: "anthropic" },
    { ts: t, type: "say", say: "text", modelInfo: [ANTHROPIC] },
    { ts: t, type: "say", say: "x".repeat(100) },
    { ts: t, type: "say", say: raw('"', Buffer.from([0xff, 0xc3]), '"') },
    { ts: t, type: "say", say: "tool", text: embedded('{"tool":"', Buffer.from([0xff]), '"}') },
    { ts: t, type: "say", say: "subagent_usage", text: "not json" },
    { ts: t, type: "ask", ask: "completion_result", partial: "yes" },
    { ts: t, type: raw('"s\\u0061y"'), say: 12, text: raw('"', Buffer.from([0xc3, 0x28]), '"') },
    { ts: t, partial: 0, conversationHistoryDeletedRange: raw(DEEP(10_000)) },
  ];
  return all[n % all.length] as Json;
}

/** A hostile `ui_messages.json` array and what of it may be counted. */
function hostileDocument(specs: readonly Spec[]): { doc: Json[]; allowed: Map<string, Counts[]> } {
  const doc: Json[] = [{ ts: 1_796_000_000_000, type: "say", say: "task", text: "t", modelInfo: ANTHROPIC }];
  const allowed = new Map<string, Counts[]>();
  const allow = (key: string, c: Counts) => allowed.set(key, [...(allowed.get(key) ?? []), c]);
  for (const [i, s] of specs.entries()) {
    const ts = String(1_796_000_000_010 + 10 * i);
    if (s.k === "req") {
      const c = s.omitCache ? { ...s.counts, cacheReads: 0, cacheWrites: 0 } : s.counts;
      const texts: Record<string, string> = countTexts(c);
      if (s.omitCache) {
        delete texts.cacheReads;
        delete texts.cacheWrites;
      }
      const say = s.escapedSay ? raw('"api_req_\\u0073tarted"') : "api_req_started";
      doc.push(requestEntry(ts, texts, REQUEST_TEXTS[s.text] as RequestText, say));
      allow(`lead|${ts}`, c);
    } else if (s.k === "hreq") {
      doc.push(
        requestEntry(
          ts,
          { ...countTexts(s.counts), [s.field]: s.value },
          REQUEST_TEXTS[s.text] as RequestText,
        ),
      );
      // A hostile cost is only not a dollar cost (never a count): the entry's counts stay valid.
      if (s.field === "cost" && !/NaN|Infinity|00012|\+3|0x10|12abc/.test(s.value))
        allow(`lead|${ts}`, s.counts);
    } else if (s.k === "tsreq") {
      const [rawTs, key] = HOSTILE_TS[s.ts] as readonly [string, string | null];
      doc.push(requestEntry(rawTs, countTexts(s.counts)));
      if (key !== null) allow(`lead|${key}`, s.counts);
    } else if (s.k === "badts") {
      doc.push(requestEntry(s.ts, countTexts({ tokensIn: 1, tokensOut: 1, cacheReads: 0, cacheWrites: 0 })));
    } else if (s.k === "sub" || s.k === "hsub") {
      const texts: Record<string, string> = countTexts(s.counts);
      if (s.k === "hsub") texts[s.field] = s.value;
      const fields = Object.entries(texts).map(([k, v]) => `,"${k}":${v}`);
      doc.push({
        ts: raw(ts),
        type: "say",
        say: "subagent_usage",
        text: embedded('{"source":"subagents"', ...fields, "}"),
        modelInfo: ANTHROPIC,
      });
      if (s.k === "sub") allow(`subagent|${ts}`, s.counts);
    } else if (s.k === "other") doc.push(other(String(Number(ts) + 5), s.n));
    else doc.push(junk(String(Number(ts) + 5), s.n));
  }
  doc.push({ ts: 1_796_000_900_000, type: "say", say: "text", text: "end", modelInfo: ANTHROPIC });
  return { doc, allowed };
}

/** The hostile document's top level: the array, or something else in its place. */
/**
 * The hostile document's top level: the array, or something else in its place, and whether the
 * result is a whole JSON document (`doc`: when the array is).
 */
const SHAPES: readonly (readonly [(doc: Buffer) => Content, boolean | "doc"])[] = [
  [(d) => d, "doc"],
  [(d) => d, "doc"],
  [(d) => d, "doc"],
  [(d) => d, "doc"],
  [(d) => d, "doc"],
  [() => Buffer.from('{"not": "an array"}'), true],
  [() => Buffer.from("42"), true],
  [() => Buffer.from("null"), true],
  [() => Buffer.from('"ui"'), true],
  [() => Buffer.from(DEEP(200_000)), true],
  [() => Buffer.alloc(0), false],
  [(d) => d.subarray(0, Math.floor(d.length / 2)), false],
  [(d) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), d]), "doc"],
  [(d) => Buffer.concat([d, Buffer.from(" \n\t ")]), "doc"],
  [(d) => Buffer.concat([d, Buffer.from("[]")]), false],
  [() => "dir", false],
  [() => "loop", false],
];

const METAS: readonly Content[] = [
  undefined,
  Buffer.from('{"environment_history":[{"ts":1,"host_name":"Cline CLI - Node.js"}]}'),
  Buffer.from('{"environment_history":5,"files_in_context":{}}'),
  Buffer.from(
    `{"files_in_context":${DEEP(100_000)},"environment_history":[null,5,"x",{"ts":"x","host_name":7},{"ts":1e300,"host_name":"PyCharm"},{"ts":-1,"host_name":null},{"ts":1e400}]}`,
  ),
  Buffer.from("[]"),
  Buffer.from("7"),
  Buffer.from("null"),
  Buffer.from('"meta"'),
  Buffer.from('{"environment_history":[{"ts":1,"host_na'),
  Buffer.alloc(0),
  Buffer.from('{"environment_history":[{"ts":NaN,"host_name":"x"}]}'),
  Buffer.concat([
    Buffer.from('{"environment_history":[{"ts":1,"host_name":"'),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}]}'),
  ]),
  Buffer.from('{"environment_history":[{"ts":1,"host_name":"\\q"}]}'),
  Buffer.from(`{"environment_history":[{"ts":1,"host_name":"${"Z".repeat(5000)}"}]}`),
  "dir",
  "loop",
];

const HISTORIES: readonly ((good: readonly GoodTask[]) => Content)[] = [
  (g) => goodHistory(g),
  () => undefined,
  () => Buffer.from('{"not": "an array"}'),
  () => Buffer.from("12"),
  () => Buffer.from("null"),
  (g) => goodHistory(g).subarray(0, Math.floor(goodHistory(g).length / 2)),
  () => Buffer.alloc(0),
  (g) => goodHistory(g, [{ id: "x", tokensIn: raw("NaN") }]),
  (g) => goodHistory(g, [null, 5, "x", { id: 7 }, {}, [], raw(DEEP(100_000))]),
  (g) =>
    encode(
      g.map((t, i) => ({
        id: t.id,
        tokensIn: raw(["1e300", "-5", "1.5", '"12"'][i % 4] as string),
        tokensOut: raw("1e400"),
        cwdOnTaskInitialization: 5,
      })),
    ),
  (g) => goodHistory(g, [{ id: "y", cwdOnTaskInitialization: raw('"', Buffer.from([0xff, 0xfe]), '"') }]),
  (g) => goodHistory(g, [{ id: "z", cwdOnTaskInitialization: raw('"\\q"') }]),
  () => "dir",
  () => "loop",
];

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
