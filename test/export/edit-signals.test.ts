/**
 * File edits as events and on spans (docs/events.md `cline.code_edit`, docs/traces.md
 * execute_tool): one `cline.code_edit` record per edit, linked to its call's span, with its
 * decision, source, operation, language and lines and nothing of its content; the call's span
 * carries the counts of its edits; exactly once through a re-read, a refused export and a
 * restart.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EditRecord } from "../../src/adapter/types.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import { spanIdOf } from "../../src/export/traces/ids.ts";
import { createLogger } from "../../src/util/log.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import { signalsTestConfig, testResource } from "./helpers/config.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const pipelines: SignalPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

async function pipeline(): Promise<SignalPipeline> {
  if (!t || !rx) throw new Error("setup first");
  const cfg = signalsTestConfig({
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: rx.tracesUrl,
  });
  const p = await SignalPipeline.create(cfg, t.ledger, {
    logger: createLogger("debug", () => {}),
    priceOf: buildPriceLookup(undefined),
    project: "path",
    resource: testResource(t.ledger),
    serviceVersion: "9.9.9",
    // The records are from now: none skipped as older than the pipeline's start.
    now: () => T - 60_000,
  });
  pipelines.push(p);
  return p;
}

const T = Date.now();

/** A request whose first call edits two files (one rejected) and whose second edits none. */
function commit(size = 100): { edits: EditRecord[]; callKeys: string[] } {
  const paid = event("m1", { toolCallCount: 2, timestampMs: T, client: "cli" });
  const c1 = call("c1", paid.dedupKey, 2, { timestampMs: T, toolName: "editor", toolUseId: "toolu_1" });
  const c2 = call("c2", paid.dedupKey, 2, { timestampMs: T, toolName: "read_files", toolUseId: "toolu_2" });
  const edits = [
    edit(c1, { linesAdded: 9, linesRemoved: 4, language: "python" }),
    edit(c1, { decision: "rejected", source: "user", linesAdded: 3, linesRemoved: 0, exact: false }, 1),
  ];
  t?.ledger.commit(withEdits(finalObservation([paid], [c1, c2], size), edits));
  return { edits, callKeys: [c1.callKey, c2.callKey] };
}

describe("cline.code_edit events and the execute_tool span's edit counts", () => {
  it("one record per edit, linked to its call's span; the call's span sums its edits", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const { edits, callKeys } = commit();
    const p = await pipeline();
    expect(await p.flush()).toEqual({ ok: true });
    const records = rx.logs.filter((l) => l.eventName === "cline.code_edit");
    expect(records).toHaveLength(edits.length);
    const [first, second] = records;
    expect(first?.attributes).toMatchObject({
      "session.id": "s1",
      "gen_ai.tool.name": "editor",
      "gen_ai.tool.call.id": "toolu_1",
      operation: "modify",
      decision: "accepted",
      source: "auto",
      language: "python",
      "cline.lines.added": 9,
      "cline.lines.removed": 4,
      "cline.lines.exact": true,
    });
    expect(second?.attributes).toMatchObject({
      decision: "rejected",
      source: "user",
      "cline.lines.exact": false,
    });
    // Linked to the call's execute_tool span (the same deterministic id).
    for (const r of records) expect(r.spanId).toBe(spanIdOf(callKeys[0] as string));
    const spans = rx.spans.filter((s) => s.name.startsWith("execute_tool"));
    const edited = spans.find((s) => s.spanId === spanIdOf(callKeys[0] as string));
    expect(edited?.attributes).toMatchObject({
      "cline.code_edit.accepted": 1,
      "cline.code_edit.rejected": 1,
      "cline.code_edit.failed": 0,
      "cline.lines.added": 12,
      "cline.lines.removed": 4,
      "cline.lines.exact": false,
    });
    // A call without edits carries none of it; no span of its own for an edit.
    const other = spans.find((s) => s.spanId === spanIdOf(callKeys[1] as string));
    expect(Object.keys(other?.attributes ?? {}).some((k) => k.startsWith("cline.code_edit"))).toBe(false);
    expect(rx.spans.some((s) => s.name === "code_edit")).toBe(false);
  });

  it("exactly once: a re-read, a refused export and a restart send each edit's record once", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const { edits } = commit();
    rx.setStatus((i) => (i === 0 ? 503 : 200));
    const p = await pipeline();
    await p.flush();
    await p.flush();
    commit(200);
    await p.flush();
    await p.shutdown();
    pipelines.splice(0);
    const again = await pipeline();
    expect(await again.flush()).toEqual({ ok: true });
    const keys = rx.logs
      .filter((l) => l.eventName === "cline.code_edit")
      .map((l) => `${l.attributes["gen_ai.tool.call.id"]}/${l.attributes.decision}`);
    expect(keys.sort()).toEqual(edits.map((e) => `toolu_1/${e.decision}`).sort());
    expect(t.ledger.signals?.queued().edit).toBe(edits.length);
  });
});
