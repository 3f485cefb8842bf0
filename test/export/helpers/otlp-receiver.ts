/**
 * An in-process OTLP/HTTP metrics receiver for tests (127.0.0.1, port 0): decodes http/json
 * and http/protobuf ExportMetricsServiceRequests (a minimal protobuf reader, written here from
 * the OTLP .proto field numbers), and reconstructs totals the way a backend does.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import {
  decodeLogsJson,
  decodeLogsProtobuf,
  decodeSpansJson,
  decodeSpansProtobuf,
  type ReceivedLog,
  type ReceivedSpan,
} from "./otlp-signals-decode.ts";

export type AttrValue = string | number | boolean;
export type { ReceivedLog, ReceivedSpan } from "./otlp-signals-decode.ts";

/** A histogram data point's content (explicit bounds). */
export interface ReceivedHistogram {
  readonly count: number;
  readonly sum: number;
  readonly bounds: readonly number[];
  readonly counts: readonly number[];
  readonly min: number | undefined;
  readonly max: number | undefined;
}

export interface ReceivedPoint {
  readonly metric: string;
  readonly kind: "sum" | "gauge" | "histogram";
  readonly unit: string;
  readonly scope: string;
  readonly temporality: "delta" | "cumulative" | "unspecified";
  readonly monotonic: boolean;
  /**
   * The point's attributes less `cline_otel.producer`, which every cline-otel metric point carries
   * (src/export/attributes.ts PRODUCER_ATTRIBUTE): tests compare series by what varies, and
   * test/export/producer-attribute.test.ts checks `producer` on every point.
   */
  readonly attributes: Readonly<Record<string, AttrValue>>;
  /** The `cline_otel.producer` attribute of the point, undefined when it had none. */
  readonly producer: AttrValue | undefined;
  readonly startNs: bigint;
  readonly timeNs: bigint;
  /** The value; for a histogram, its sum. */
  readonly value: number;
  readonly histogram?: ReceivedHistogram;
  readonly resource: Readonly<Record<string, AttrValue>>;
  /** Index of the request that carried it. */
  readonly request: number;
}

export interface ReceivedRequest {
  readonly index: number;
  /** The request path (/v1/metrics, /v1/logs, /v1/traces). */
  readonly path: string;
  readonly protocol: "json" | "protobuf";
  readonly bytes: number;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

export interface Receiver {
  readonly url: string;
  /** The same server's /v1/logs and /v1/traces, and its base (for OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly logsUrl: string;
  readonly tracesUrl: string;
  readonly baseUrl: string;
  readonly requests: ReceivedRequest[];
  /** Points of ACCEPTED (2xx) requests only: what a backend stored. */
  readonly points: ReceivedPoint[];
  /** Log records and spans of accepted /v1/logs and /v1/traces requests. */
  readonly logs: ReceivedLog[];
  readonly spans: ReceivedSpan[];
  /**
   * Changes the answer policy: status code for request number i (0-based). CUT: the connection
   * is destroyed with no answer and nothing is stored (a cut link, a proxy that dropped it).
   */
  setStatus(policy: (i: number) => number): void;
  /** Answers each request this long after its body arrived (a slow backend). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

/** HTTPS instead of HTTP; with `ca` and `requestCert`, client certificates are required (mTLS). */
export interface ReceiverTls {
  readonly key: string;
  readonly cert: string;
  readonly ca?: string;
  readonly requestCert?: boolean;
}

/** A status of the answer policy: no answer, the connection destroyed, nothing stored. */
export const CUT = 0;

export async function startReceiver(
  policy: (i: number) => number = () => 200,
  opts: { tls?: ReceiverTls } = {},
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const points: ReceivedPoint[] = [];
  const logs: ReceivedLog[] = [];
  const spans: ReceivedSpan[] = [];
  let status = policy;
  let delayMs = 0;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => (delayMs > 0 ? setTimeout(answer, delayMs) : answer()));
    const answer = () => {
      const wire = Buffer.concat(chunks);
      const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(wire) : wire;
      const index = requests.length;
      const json = (req.headers["content-type"] ?? "").includes("json");
      const code = status(index);
      const path = (req.url ?? "").split("?")[0] ?? "";
      requests.push({
        index,
        path,
        protocol: json ? "json" : "protobuf",
        bytes: wire.length,
        status: code,
        headers: req.headers,
      });
      if (code === CUT) {
        req.socket.destroy();
        return;
      }
      // Each signal's path has its decoder (metrics for any other path, as before).
      if (code >= 200 && code < 300) {
        if (path.endsWith("/v1/logs"))
          logs.push(...(json ? decodeLogsJson : decodeLogsProtobuf)(body, index));
        else if (path.endsWith("/v1/traces"))
          spans.push(...(json ? decodeSpansJson : decodeSpansProtobuf)(body, index));
        else points.push(...(json ? decodeJson(body, index) : decodeProtobuf(body, index)));
      }
      res.statusCode = code;
      res.setHeader("content-type", json ? "application/json" : "application/x-protobuf");
      res.end(json ? "{}" : Buffer.alloc(0));
    };
  };
  const tls = opts.tls;
  const server = tls
    ? createTlsServer(
        {
          key: tls.key,
          cert: tls.cert,
          ...(tls.ca ? { ca: tls.ca } : {}),
          requestCert: tls.requestCert === true,
          rejectUnauthorized: tls.requestCert === true,
        },
        onRequest,
      )
    : createServer(onRequest);
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}/v1/metrics`,
    logsUrl: `${tls ? "https" : "http"}://127.0.0.1:${port}/v1/logs`,
    tracesUrl: `${tls ? "https" : "http"}://127.0.0.1:${port}/v1/traces`,
    baseUrl: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    requests,
    points,
    logs,
    spans,
    setStatus(p) {
      status = p;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------- http/json ----------

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
}
export interface JsonKv {
  key: string;
  value: JsonAnyValue;
}

/** OTLP/JSON KeyValue list as attributes (also of logs and spans: otlp-signals-decode.ts). */
export function jsonAttrs(kvs: JsonKv[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of kvs ?? []) {
    const v = kv.value;
    out[kv.key] =
      v.stringValue ??
      v.boolValue ??
      (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
      v.doubleValue ??
      "";
  }
  return out;
}

const TEMPORALITY = ["unspecified", "delta", "cumulative"] as const;

const PRODUCER_KEY = "cline_otel.producer";

/** A metric point's attributes with `cline_otel.producer` taken out into its own field. */
export function producerApart(attrs: Record<string, AttrValue>): {
  attributes: Record<string, AttrValue>;
  producer: AttrValue | undefined;
} {
  const { [PRODUCER_KEY]: producer, ...attributes } = attrs;
  return { attributes, producer };
}

export function decodeJson(body: Buffer, request: number): ReceivedPoint[] {
  // biome-ignore lint/suspicious/noExplicitAny: test decoder of a foreign wire format
  const req = JSON.parse(body.toString("utf8")) as any;
  const out: ReceivedPoint[] = [];
  for (const rm of req.resourceMetrics ?? []) {
    const resource = jsonAttrs(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        if (m.histogram) {
          for (const dp of m.histogram.dataPoints ?? []) {
            const histogram: ReceivedHistogram = {
              count: Number(dp.count ?? 0),
              sum: Number(dp.sum ?? 0),
              bounds: (dp.explicitBounds ?? []).map(Number),
              counts: (dp.bucketCounts ?? []).map(Number),
              min: dp.min === undefined ? undefined : Number(dp.min),
              max: dp.max === undefined ? undefined : Number(dp.max),
            };
            out.push({
              metric: m.name,
              kind: "histogram",
              unit: m.unit ?? "",
              scope: sm.scope?.name ?? "",
              temporality: TEMPORALITY[m.histogram.aggregationTemporality ?? 0] ?? "unspecified",
              monotonic: false,
              ...producerApart(jsonAttrs(dp.attributes)),
              startNs: BigInt(dp.startTimeUnixNano ?? 0),
              timeNs: BigInt(dp.timeUnixNano ?? 0),
              value: histogram.sum,
              histogram,
              resource,
              request,
            });
          }
          continue;
        }
        const data = m.sum ?? m.gauge;
        if (!data) continue;
        for (const dp of data.dataPoints ?? []) {
          out.push({
            metric: m.name,
            kind: m.sum ? "sum" : "gauge",
            unit: m.unit ?? "",
            scope: sm.scope?.name ?? "",
            temporality: TEMPORALITY[data.aggregationTemporality ?? 0] ?? "unspecified",
            monotonic: data.isMonotonic === true,
            ...producerApart(jsonAttrs(dp.attributes)),
            startNs: BigInt(dp.startTimeUnixNano ?? 0),
            timeNs: BigInt(dp.timeUnixNano ?? 0),
            value: dp.asDouble !== undefined ? Number(dp.asDouble) : Number(dp.asInt ?? 0),
            resource,
            request,
          });
        }
      }
    }
  }
  return out;
}

// ---------- http/protobuf ----------

interface Field {
  readonly no: number;
  readonly wire: number;
  /** varint / fixed64 as bigint, length-delimited as bytes. */
  readonly int?: bigint;
  readonly bytes?: Buffer;
}

function readVarint(buf: Buffer, pos: { p: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos.p++];
    if (b === undefined) throw new Error("truncated varint");
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
  }
}

/** Splits one protobuf message into its fields (wire types 0, 1, 2, 5). */
export function protoFields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const pos = { p: 0 };
  while (pos.p < buf.length) {
    const tag = Number(readVarint(buf, pos));
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, int: readVarint(buf, pos) });
    else if (wire === 1) {
      out.push({ no, wire, int: buf.readBigUInt64LE(pos.p), bytes: buf.subarray(pos.p, pos.p + 8) });
      pos.p += 8;
    } else if (wire === 2) {
      const len = Number(readVarint(buf, pos));
      out.push({ no, wire, bytes: buf.subarray(pos.p, pos.p + len) });
      pos.p += len;
    } else if (wire === 5) {
      out.push({ no, wire, bytes: buf.subarray(pos.p, pos.p + 4) });
      pos.p += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const sub = (fs: Field[], no: number): Buffer[] =>
  fs.filter((f) => f.no === no && f.bytes !== undefined).map((f) => f.bytes as Buffer);
const str = (fs: Field[], no: number): string => sub(fs, no)[0]?.toString("utf8") ?? "";
const int = (fs: Field[], no: number): bigint => fs.find((f) => f.no === no)?.int ?? 0n;

function protoAnyValue(buf: Buffer): AttrValue {
  const f = protoFields(buf)[0];
  if (!f) return "";
  switch (f.no) {
    case 1:
      return (f.bytes as Buffer).toString("utf8");
    case 2:
      return f.int === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.int ?? 0n));
    case 4:
      return (f.bytes as Buffer).readDoubleLE(0);
    default:
      return "";
  }
}

/** Protobuf KeyValue messages as attributes (also of logs and spans: otlp-signals-decode.ts). */
export function protoAttrs(kvs: Buffer[]): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of kvs) {
    const fs = protoFields(kv);
    const v = sub(fs, 2)[0];
    out[str(fs, 1)] = v ? protoAnyValue(v) : "";
  }
  return out;
}

/** Repeated fixed64 / double field `no`, packed (wire 2) or not (wire 1). */
function repeated64(fs: Field[], no: number, as: "u64" | "double"): number[] {
  const out: number[] = [];
  const one = (b: Buffer, at: number) =>
    as === "double" ? b.readDoubleLE(at) : Number(b.readBigUInt64LE(at));
  for (const f of fs) {
    if (f.no !== no || f.bytes === undefined) continue;
    if (f.wire === 1) out.push(one(f.bytes, 0));
    else for (let at = 0; at + 8 <= f.bytes.length; at += 8) out.push(one(f.bytes, at));
  }
  return out;
}

/** HistogramDataPoint: count 4, sum 5, bucket_counts 6, explicit_bounds 7, min 11, max 12. */
function protoHistogram(dp: Field[]): ReceivedHistogram {
  const dbl = (no: number): number | undefined => {
    const f = dp.find((x) => x.no === no && x.wire === 1);
    return f?.bytes ? f.bytes.readDoubleLE(0) : undefined;
  };
  return {
    count: Number(int(dp, 4)),
    sum: dbl(5) ?? 0,
    counts: repeated64(dp, 6, "u64"),
    bounds: repeated64(dp, 7, "double"),
    min: dbl(11),
    max: dbl(12),
  };
}

/** ExportMetricsServiceRequest (opentelemetry/proto/collector/metrics/v1). */
export function decodeProtobuf(body: Buffer, request: number): ReceivedPoint[] {
  const out: ReceivedPoint[] = [];
  for (const rmBuf of sub(protoFields(body), 1)) {
    const rm = protoFields(rmBuf);
    const resBuf = sub(rm, 1)[0];
    const resource = resBuf ? protoAttrs(sub(protoFields(resBuf), 1)) : {};
    for (const smBuf of sub(rm, 2)) {
      const sm = protoFields(smBuf);
      const scopeBuf = sub(sm, 1)[0];
      const scope = scopeBuf ? str(protoFields(scopeBuf), 1) : "";
      for (const mBuf of sub(sm, 2)) {
        const m = protoFields(mBuf);
        const histBuf = sub(m, 9)[0];
        if (histBuf) {
          const h = protoFields(histBuf);
          for (const dpBuf of sub(h, 1)) {
            const dp = protoFields(dpBuf);
            const histogram = protoHistogram(dp);
            out.push({
              metric: str(m, 1),
              kind: "histogram",
              unit: str(m, 3),
              scope,
              temporality: TEMPORALITY[Number(int(h, 2))] ?? "unspecified",
              monotonic: false,
              ...producerApart(protoAttrs(sub(dp, 9))),
              startNs: int(dp, 2),
              timeNs: int(dp, 3),
              value: histogram.sum,
              histogram,
              resource,
              request,
            });
          }
          continue;
        }
        const sumBuf = sub(m, 7)[0];
        const gaugeBuf = sub(m, 5)[0];
        const data = sumBuf ?? gaugeBuf;
        if (!data) continue;
        const d = protoFields(data);
        for (const dpBuf of sub(d, 1)) {
          const dp = protoFields(dpBuf);
          const dbl = dp.find((f) => f.no === 4);
          const asInt = dp.find((f) => f.no === 6);
          out.push({
            metric: str(m, 1),
            kind: sumBuf ? "sum" : "gauge",
            unit: str(m, 3),
            scope,
            temporality: sumBuf ? (TEMPORALITY[Number(int(d, 2))] ?? "unspecified") : "unspecified",
            monotonic: sumBuf ? int(d, 3) === 1n : false,
            ...producerApart(protoAttrs(sub(dp, 7))),
            startNs: int(dp, 2),
            timeNs: int(dp, 3),
            value: dbl?.bytes
              ? dbl.bytes.readDoubleLE(0)
              : asInt?.int !== undefined
                ? Number(BigInt.asIntN(64, asInt.int))
                : 0,
            resource,
            request,
          });
        }
      }
    }
  }
  return out;
}

// ---------- backend reconstruction ----------

export function attrKey(attrs: Readonly<Record<string, AttrValue>>): string {
  return JSON.stringify(
    Object.keys(attrs)
      .sort()
      .map((k) => [k, attrs[k]]),
  );
}

/**
 * Totals per series as a backend reconstructs cumulative streams: the latest value (by time)
 * per series and start time, summed over distinct start times (a new start time = a new stream).
 */
export function cumulativeTotals(
  points: readonly ReceivedPoint[],
  metric: string,
  value: (p: ReceivedPoint) => number = (p) => p.value,
): Map<string, number> {
  const latest = new Map<string, { timeNs: bigint; value: number; series: string }>();
  for (const p of points) {
    if (p.metric !== metric) continue;
    const series = attrKey(p.attributes);
    const stream = `${series}|${p.startNs}|${p.resource["service.instance.id"] ?? ""}`;
    const prev = latest.get(stream);
    if (!prev || p.timeNs >= prev.timeNs) latest.set(stream, { timeNs: p.timeNs, value: value(p), series });
  }
  const out = new Map<string, number>();
  for (const { series, value } of latest.values()) out.set(series, (out.get(series) ?? 0) + value);
  return out;
}

/** Totals per series of delta streams: every accepted point adds. */
export function deltaTotals(
  points: readonly ReceivedPoint[],
  metric: string,
  value: (p: ReceivedPoint) => number = (p) => p.value,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of points) {
    if (p.metric !== metric) continue;
    const k = attrKey(p.attributes);
    out.set(k, (out.get(k) ?? 0) + value(p));
  }
  return out;
}

/** A histogram point's record count (0 for anything else). */
export const histogramCount = (p: ReceivedPoint): number => p.histogram?.count ?? 0;

/** A histogram point's count in bucket `i` (0 for anything else). */
export const bucketCount =
  (i: number) =>
  (p: ReceivedPoint): number =>
    p.histogram?.counts[i] ?? 0;

/** Sums series totals by one attribute (like PromQL `sum by (attr)`). */
export function sumBy(totals: ReadonlyMap<string, number>, attr: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of totals) {
    const entries = JSON.parse(k) as [string, AttrValue][];
    const val = String(entries.find(([key]) => key === attr)?.[1] ?? "");
    out[val] = (out[val] ?? 0) + v;
  }
  return out;
}
