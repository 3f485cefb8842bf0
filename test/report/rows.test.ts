import { describe, expect, it } from "vitest";
import { csvField, renderCsv } from "../../src/report/csv.ts";
import { foldRows } from "../../src/report/query.ts";
import { type Numbers, type ReportRow, rankRows, zeroNumbers } from "../../src/report/report.ts";

const n = (over: Partial<Numbers>): Numbers => ({ ...zeroNumbers(), ...over });
const row = (project: string, over: Partial<Numbers>): ReportRow => ({ project, ...n(over) });

describe("rankRows", () => {
  const rows = [
    row("a", { cost: 1, input: 500, events: 1 }),
    row("b", { cost: 3, input: 100, events: 5 }),
    row("c", { cost: 2, input: 900, events: 2 }),
    row("d", { cost: 2, input: 10, events: 9 }),
  ];
  it.each([
    // sort, top -> order, others
    [undefined, undefined, ["a", "b", "c", "d"], undefined],
    ["cost", undefined, ["b", "c", "d", "a"], undefined], // equal costs keep their order
    ["tokens", undefined, ["c", "a", "b", "d"], undefined],
    ["requests", 2, ["d", "b"], { groups: 2, events: 3, input: 1400, cost: 3 }],
    [undefined, 1, ["b"], { groups: 3, events: 12, input: 1410, cost: 5 }], // --top alone sorts by cost
    ["cost", 4, ["b", "c", "d", "a"], undefined], // nothing cut, no others
  ] as const)("--sort %s --top %s", (sort, top, order, others) => {
    const r = rankRows(rows, sort, top);
    expect(r.rows.map((x) => x.project)).toEqual(order);
    if (others === undefined) expect(r.others).toBeUndefined();
    else expect(r.others).toMatchObject(others);
  });
});

describe("foldRows", () => {
  it("sums rows with the same labels and sorts by them", () => {
    const folded = foldRows(
      [
        { day: "2026-11-30", model: "m", input: 1, events: 1 },
        { day: "2026-11-29", model: "m", input: 2, events: 1 },
        { day: "2026-11-30", model: "m", input: 4, events: 2 },
        { day: "2026-11-30", model: "a", input: 8, events: 1, toolCalls: 3 },
      ],
      ["day", "model"],
    );
    expect(folded).toEqual([
      { day: "2026-11-29", model: "m", input: 2, events: 1 },
      { day: "2026-11-30", model: "a", input: 8, events: 1, toolCalls: 3 },
      { day: "2026-11-30", model: "m", input: 5, events: 3 },
    ]);
  });
});

describe("CSV", () => {
  it.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
  ])("%j is written %j", (v, want) => {
    expect(csvField(v)).toBe(want);
  });

  it("writes a header and one row per group, unknown costs empty, and the cut groups last", () => {
    const text = renderCsv({
      by: ["project"],
      rows: [row("p", { input: 3, cost: 0.1 + 0.2, events: 1 }), row("q", { events: 2, unpricedEvents: 2 })],
      totals: n({}),
      others: { ...n({ input: 7, events: 1, cost: 0.5 }), groups: 4 },
    });
    expect(text).toBe(
      [
        "project,input,output,cacheRead,cacheWrite,events,toolCalls,cost,unpricedEvents,activeUserSeconds,activeAgentSeconds,commits,pullRequests,linesAdded,linesRemoved,editsAccepted,editsRejected,editsFailed,acceptanceRate",
        "p,3,0,0,0,1,0,0.3,0,0,0,0,0,0,0,0,0,0,",
        "q,0,0,0,0,2,0,,2,0,0,0,0,0,0,0,0,0,",
        "(4 more),7,0,0,0,1,0,0.5,0,0,0,0,0,0,0,0,0,0,",
        "",
      ].join("\n"),
    );
  });
});
