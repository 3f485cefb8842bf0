/**
 * The cases of test/reliability/fuzz-tasks.test.ts: good tasks, and generators of hostile
 * `ui_messages.json`, `task_metadata.json` and `taskHistory.json` contents of every shape.
 */
import fc from "fast-check";
import {
  ANTHROPIC,
  COUNT_FIELDS,
  type Counts,
  countTexts,
  embedded,
  encode,
  type Json,
  Outer,
  type RequestText,
  raw,
  requestEntry,
  sumCounts,
} from "./task-fuzz.ts";

/** What stands where a file belongs: its bytes, a directory, a symlink loop, or nothing. */
export type Content = Buffer | "dir" | "loop" | undefined;

export interface GoodTask {
  readonly id: string;
  readonly requests: readonly Counts[];
}

/** The good tasks' ids sort on both sides of the hostile one. */
export const GOOD_IDS = ["1796000000001", "1796000000003", "1796000000005"];
export const BAD_ID = "1796000000002";

/** A valid taskHistory.json of the good tasks (their totals and cwd), the hostile task's entry hostile. */
export function goodHistory(good: readonly GoodTask[], extra: readonly Json[] = []): Buffer {
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

export const countsArb: fc.Arbitrary<Counts> = fc.record({
  tokensIn: fc.nat(5_000_000),
  tokensOut: fc.nat(100_000),
  cacheReads: fc.nat(5_000_000),
  cacheWrites: fc.nat(1_000_000),
});

export const goodArb: fc.Arbitrary<GoodTask[]> = fc
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
export const NOT_JSON_TS = ["NaN", "Infinity", "-Infinity", "1796000000000abc"];

export const DEEP = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

/** Request texts: plain, escapes and quotes, NUL and control escapes, invalid bytes, deep nesting. */
const REQUEST_TEXTS: readonly RequestText[] = [
  "req",
  'say "hi" \\ C:\\dir\\ \u00e9\u2603 \ud83d\ude00 </tool> {"tokensIn": 99}',
  "\u0000\u0001\u001f\\\\\\",
  Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
  { inner: DEEP(20_000) },
  { inner: '{"tokensIn": 7, "nested": {"tokensOut": 8}}' },
];

export type Spec =
  | { k: "req"; counts: Counts; omitCache: boolean; text: number; escapedSay: boolean }
  | { k: "hreq"; counts: Counts; field: (typeof COUNT_FIELDS)[number] | "cost"; value: string; text: number }
  | { k: "tsreq"; counts: Counts; ts: number }
  | { k: "badts"; ts: string }
  | { k: "sub"; counts: Counts }
  | { k: "hsub"; counts: Counts; field: (typeof COUNT_FIELDS)[number]; value: string }
  | { k: "other"; n: number }
  | { k: "junk"; n: number };

export const specArb: fc.Arbitrary<Spec> = fc.oneof(
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
export function hostileDocument(specs: readonly Spec[]): { doc: Json[]; allowed: Map<string, Counts[]> } {
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
export const SHAPES: readonly (readonly [(doc: Buffer) => Content, boolean | "doc"])[] = [
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

export const METAS: readonly Content[] = [
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

export const HISTORIES: readonly ((good: readonly GoodTask[]) => Content)[] = [
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
