/**
 * `run --once` exits 1 whenever something due was not delivered. The flush that decides it must
 * count a delta backlog the drain could not move as undelivered, even when every export answered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { undeliveredBacklog } from "../../src/export/delivery.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { createLogger } from "../../src/util/log.ts";
import { event, observation } from "../helpers/events.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
let p: ExportPipeline | undefined;
afterEach(async () => {
  await p?.shutdown();
  p = undefined;
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

async function start(temporality: "delta" | "cumulative"): Promise<ExportPipeline> {
  if (!t || !rx) throw new Error("setup first");
  const cfg = exportTestConfig({
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: temporality,
  });
  p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("error", () => {}),
    priceOf: buildPriceLookup(undefined),
    serviceVersion: "9.9.9",
  });
  return p;
}

describe("flush verdict", () => {
  it("undeliveredBacklog names each destination that still has something due", () => {
    expect(
      undeliveredBacklog([
        { name: "otlp", target: "http://a", backlog: true },
        { name: "otlp", target: "http://b", backlog: false },
      ]),
    ).toEqual([{ exporter: "otlp", target: "http://a", reason: expect.stringContaining("undelivered") }]);
  });

  it("delta: exports that answer but never move the watermarks are a failed flush, not 'nothing to deliver'", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a"), event("b")]));
    rx = await startReceiver();
    const pipeline = await start("delta");
    // The delivered windows are never recorded (as when another writer moved the state meanwhile).
    t.ledger.putExportState = () => {};
    const out = await pipeline.flush();
    expect(rx.requests.length).toBeGreaterThan(0);
    expect(out.ok).toBe(false);
    expect(JSON.stringify(out)).toContain("no progress");
    expect(JSON.stringify(out)).toContain(rx.url);
  });

  it("delta: a delivered backlog is ok, and so is a flush with nothing due", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a")]));
    rx = await startReceiver();
    const pipeline = await start("delta");
    expect(await pipeline.flush()).toEqual({ ok: true });
    expect(await pipeline.flush()).toEqual({ ok: true });
  });
});
