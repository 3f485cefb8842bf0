/**
 * Decoders of OTLP logs and traces requests (http/json and http/protobuf) for the in-process
 * receiver: a minimal reader written from the OTLP .proto field numbers, no generated code.
 */
import { type AttrValue, jsonAttrs, protoAttrs, protoFields } from "./otlp-receiver.ts";

/** One log record of an accepted /v1/logs request. */
export interface ReceivedLog {
  readonly eventName: string;
  readonly timeNs: bigint;
  readonly observedNs: bigint;
  readonly severityNumber: number;
  readonly attributes: Readonly<Record<string, AttrValue>>;
  /** Hex, "" when absent. */
  readonly traceId: string;
  readonly spanId: string;
  readonly scope: string;
  readonly resource: Readonly<Record<string, AttrValue>>;
  readonly request: number;
}

/** One span of an accepted /v1/traces request. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Hex, "" for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP enum: 1 internal, 2 server, 3 client, ... */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, AttrValue>>;
  /** OTLP enum: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly scope: string;
  readonly resource: Readonly<Record<string, AttrValue>>;
  readonly request: number;
}

type Field = ReturnType<typeof protoFields>[number];

const sub = (fs: Field[], no: number): Buffer[] =>
  fs.filter((f) => f.no === no && f.bytes !== undefined && f.wire === 2).map((f) => f.bytes as Buffer);
const str = (fs: Field[], no: number): string => sub(fs, no)[0]?.toString("utf8") ?? "";
const varint = (fs: Field[], no: number): bigint => fs.find((f) => f.no === no && f.wire === 0)?.int ?? 0n;
const fixed64 = (fs: Field[], no: number): bigint => fs.find((f) => f.no === no && f.wire === 1)?.int ?? 0n;
const hex = (fs: Field[], no: number): string => sub(fs, no)[0]?.toString("hex") ?? "";

function resourceOf(fs: Field[]): Record<string, AttrValue> {
  const r = sub(fs, 1)[0];
  return r ? protoAttrs(sub(protoFields(r), 1)) : {};
}

function scopeOf(fs: Field[]): string {
  const s = sub(fs, 1)[0];
  return s ? str(protoFields(s), 1) : "";
}

/** ExportLogsServiceRequest: resource_logs 1 > scope_logs 2 > log_records 2. */
export function decodeLogsProtobuf(body: Buffer, request: number): ReceivedLog[] {
  const out: ReceivedLog[] = [];
  for (const rlBuf of sub(protoFields(body), 1)) {
    const rl = protoFields(rlBuf);
    const resource = resourceOf(rl);
    for (const slBuf of sub(rl, 2)) {
      const sl = protoFields(slBuf);
      const scope = scopeOf(sl);
      for (const rBuf of sub(sl, 2)) {
        const r = protoFields(rBuf);
        out.push({
          eventName: str(r, 12),
          timeNs: fixed64(r, 1),
          observedNs: fixed64(r, 11),
          severityNumber: Number(varint(r, 2)),
          attributes: protoAttrs(sub(r, 6)),
          traceId: hex(r, 9),
          spanId: hex(r, 10),
          scope,
          resource,
          request,
        });
      }
    }
  }
  return out;
}

/** ExportTraceServiceRequest: resource_spans 1 > scope_spans 2 > spans 2. */
export function decodeSpansProtobuf(body: Buffer, request: number): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rsBuf of sub(protoFields(body), 1)) {
    const rs = protoFields(rsBuf);
    const resource = resourceOf(rs);
    for (const ssBuf of sub(rs, 2)) {
      const ss = protoFields(ssBuf);
      const scope = scopeOf(ss);
      for (const spBuf of sub(ss, 2)) {
        const sp = protoFields(spBuf);
        const status = sub(sp, 15)[0];
        out.push({
          traceId: hex(sp, 1),
          spanId: hex(sp, 2),
          parentSpanId: hex(sp, 4),
          name: str(sp, 5),
          kind: Number(varint(sp, 6)),
          startNs: fixed64(sp, 7),
          endNs: fixed64(sp, 8),
          attributes: protoAttrs(sub(sp, 9)),
          statusCode: status ? Number(varint(protoFields(status), 3)) : 0,
          scope,
          resource,
          request,
        });
      }
    }
  }
  return out;
}

/** OTLP/JSON ids are hex strings (tolerating base64, the generic protobuf-JSON mapping). */
function jsonId(v: unknown): string {
  if (typeof v !== "string" || v === "") return "";
  return /^[0-9a-f]+$/i.test(v) ? v.toLowerCase() : Buffer.from(v, "base64").toString("hex");
}

export function decodeLogsJson(body: Buffer, request: number): ReceivedLog[] {
  // biome-ignore lint/suspicious/noExplicitAny: test decoder of a foreign wire format
  const req = JSON.parse(body.toString("utf8")) as any;
  const out: ReceivedLog[] = [];
  for (const rl of req.resourceLogs ?? []) {
    const resource = jsonAttrs(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        out.push({
          eventName: r.eventName ?? "",
          timeNs: BigInt(r.timeUnixNano ?? 0),
          observedNs: BigInt(r.observedTimeUnixNano ?? 0),
          severityNumber: Number(r.severityNumber ?? 0),
          attributes: jsonAttrs(r.attributes),
          traceId: jsonId(r.traceId),
          spanId: jsonId(r.spanId),
          scope: sl.scope?.name ?? "",
          resource,
          request,
        });
      }
    }
  }
  return out;
}

export function decodeSpansJson(body: Buffer, request: number): ReceivedSpan[] {
  // biome-ignore lint/suspicious/noExplicitAny: test decoder of a foreign wire format
  const req = JSON.parse(body.toString("utf8")) as any;
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const sp of ss.spans ?? []) {
        out.push({
          traceId: jsonId(sp.traceId),
          spanId: jsonId(sp.spanId),
          parentSpanId: jsonId(sp.parentSpanId),
          name: sp.name ?? "",
          kind: Number(sp.kind ?? 0),
          startNs: BigInt(sp.startTimeUnixNano ?? 0),
          endNs: BigInt(sp.endTimeUnixNano ?? 0),
          attributes: jsonAttrs(sp.attributes),
          statusCode: Number(sp.status?.code ?? 0),
          scope: ss.scope?.name ?? "",
          resource,
          request,
        });
      }
    }
  }
  return out;
}
