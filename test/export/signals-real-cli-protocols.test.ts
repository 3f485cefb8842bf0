/**
 * Events and traces of data the REAL Cline CLI (3.0.65) wrote, over every OTLP protocol a user can
 * pick (http/protobuf, http/json, gRPC) and with the default quiet time: `run --once` over a copy
 * of the tool-error fixture (failed and succeeding calls, sub-agents) must deliver the same records
 * and spans whatever the wire format. The content itself is checked against the documents in
 * signals-real-cli.test.ts (http/protobuf); here every protocol must equal that run, and the run
 * is checked against the documents' own counts so an empty export cannot pass.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadGroundTruth, messageDocuments } from "../../fixtures/harness/ground-truth.ts";
import { runCliAsync } from "../e2e/helpers/cli.ts";
import {
  type GrpcReceiver,
  LOGS_EXPORT_PATH,
  startGrpcReceiver,
  TRACES_EXPORT_PATH,
} from "./helpers/grpc-receiver.ts";
import {
  type ReceivedLog,
  type ReceivedSpan,
  type Receiver,
  startReceiver,
} from "./helpers/otlp-receiver.ts";

interface Block {
  type: string;
  id?: string;
}
interface Doc {
  messages: { role: string; metrics?: Record<string, number>; content: Block[] }[];
}

const work = mkdtempSync(join(tmpdir(), "signals-protocols-"));
let http: Receiver;
let grpcLogs: GrpcReceiver;
let grpcSpans: GrpcReceiver;
beforeAll(async () => {
  http = await startReceiver();
  grpcLogs = await startGrpcReceiver({ path: LOGS_EXPORT_PATH });
  grpcSpans = await startGrpcReceiver({ path: TRACES_EXPORT_PATH });
});
afterAll(async () => {
  await http.close();
  await grpcLogs.close();
  await grpcSpans.close();
  rmSync(work, { recursive: true, force: true });
});

type Protocol = "http/protobuf" | "http/json" | "grpc";

/** A fresh copy of the fixture per run (the product only reads it). */
function copyFixture(tag: string): string {
  const gt = loadGroundTruth("tool-error");
  const root = join(work, tag);
  cpSync(gt.fixtureRoot, root, { recursive: true });
  return join(root, gt.env.HOME ?? "home");
}

/** `run --once` over a fresh copy and state; what the receivers accepted during it. */
async function runOnce(
  tag: string,
  protocol: Protocol,
  quiet: string | undefined,
): Promise<{ logs: ReceivedLog[]; spans: ReceivedSpan[] }> {
  const home = copyFixture(tag);
  const grpc = protocol === "grpc";
  const logs0 = (grpc ? grpcLogs.logs : http.logs).length;
  const spans0 = (grpc ? grpcSpans.spans : http.spans).length;
  const env: Record<string, string> = {
    HOME: home,
    CLINE_OTEL_STATE_DIR: join(work, `${tag}-state`),
    OTEL_METRICS_EXPORTER: "none",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
    OTEL_BLRP_SCHEDULE_DELAY: "200",
    OTEL_BSP_SCHEDULE_DELAY: "200",
    ...(grpc
      ? { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: grpcLogs.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: grpcSpans.url }
      : { OTEL_EXPORTER_OTLP_ENDPOINT: http.baseUrl }),
    ...(quiet === undefined ? {} : { CLINE_OTEL_QUIET_TIME: quiet }),
  };
  const r = await runCliAsync(["run", "--once"], env);
  expect(r.status, r.stderr).toBe(0);
  return {
    logs: (grpc ? grpcLogs.logs : http.logs).slice(logs0),
    spans: (grpc ? grpcSpans.spans : http.spans).slice(spans0),
  };
}

/**
 * Everything a backend stores of a record or span, minus the request it came in and the resource's
 * service.instance.id (derived from the Cline directories: each run reads its own copy).
 */
const canon = (attrs: Readonly<Record<string, unknown>>) =>
  JSON.stringify(
    Object.entries(attrs)
      .filter(([k]) => k !== "service.instance.id")
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
const logKey = (l: ReceivedLog) =>
  [
    l.eventName,
    l.timeNs,
    l.severityNumber,
    l.traceId,
    l.spanId,
    l.scope,
    canon(l.attributes),
    canon(l.resource),
  ].join("|");
const spanKey = (s: ReceivedSpan) =>
  [
    s.traceId,
    s.spanId,
    s.parentSpanId,
    s.name,
    s.kind,
    s.startNs,
    s.endNs,
    s.statusCode,
    s.scope,
    canon(s.attributes),
    canon(s.resource),
  ].join("|");
const sorted = (keys: string[]) => [...keys].sort();

describe("real-CLI tool-error fixture over every OTLP protocol, and with the default quiet time", () => {
  const runs = new Map<string, { logs: ReceivedLog[]; spans: ReceivedSpan[] }>();
  let requests = 0;
  let calls = 0;
  beforeAll(async () => {
    const gt = loadGroundTruth("tool-error");
    for (const f of messageDocuments(join(gt.fixtureRoot, gt.layout.sessionsDir))) {
      if (f.includes("/before/")) continue;
      const doc = JSON.parse(readFileSync(f, "utf8")) as Doc;
      for (const m of doc.messages) {
        if (m.role === "assistant" && m.metrics) requests++;
        calls += m.content.filter((b) => b.type === "tool_use" && b.id).length;
      }
    }
    // Quiet time 1 s as in signals-real-cli.test.ts; "default" leaves CLINE_OTEL_QUIET_TIME unset
    // (15 minutes): the committed documents are older than that, so their turns are final too.
    runs.set("http/protobuf", await runOnce("protobuf", "http/protobuf", "1"));
    runs.set("http/json", await runOnce("json", "http/json", "1"));
    runs.set("grpc", await runOnce("grpc", "grpc", "1"));
    runs.set("default quiet time", await runOnce("default-quiet", "http/protobuf", undefined));
  }, 120_000);

  it("the baseline run holds one record per request and per tool call, a span for each, no orphans", () => {
    const base = runs.get("http/protobuf");
    expect(requests).toBeGreaterThan(0);
    expect(calls).toBeGreaterThan(0);
    expect(base?.logs.filter((l) => l.eventName === "cline.api_request")).toHaveLength(requests);
    expect(base?.logs.filter((l) => l.eventName === "cline.tool_call")).toHaveLength(calls);
    const spans = base?.spans ?? [];
    expect(spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat")).toHaveLength(requests);
    expect(spans.filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool")).toHaveLength(calls);
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => s.parentSpanId !== "" && !ids.has(s.parentSpanId))).toEqual([]);
  });

  it.each([
    "http/json",
    "grpc",
    "default quiet time",
  ])("%s: the same records and spans as http/protobuf", (name) => {
    const base = runs.get("http/protobuf");
    const run = runs.get(name);
    expect(sorted(run?.logs.map(logKey) ?? [])).toEqual(sorted(base?.logs.map(logKey) ?? []));
    expect(sorted(run?.spans.map(spanKey) ?? [])).toEqual(sorted(base?.spans.map(spanKey) ?? []));
  });
});
