/**
 * An in-process OTLP/gRPC metrics receiver for tests (@grpc/grpc-js on 127.0.0.1, a free port),
 * plaintext or TLS (optionally requiring a client certificate).
 *
 * The service is defined by hand with identity Buffer (de)serializers, the way the SDK's own
 * client is (otlp-grpc-exporter-base), instead of loading the .proto files: the OTLP protos are
 * not shipped in any installed package (@opentelemetry/otlp-transformer 0.301 carries a
 * hand-written encoder and no request decoder). Requests are decoded by `decodeProtobuf`, the
 * same decoder the HTTP receiver uses, so gRPC and HTTP tests compare like with like.
 */
import {
  type Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { decodeProtobuf, type ReceivedPoint } from "./otlp-receiver.ts";
import {
  decodeLogsProtobuf,
  decodeSpansProtobuf,
  type ReceivedLog,
  type ReceivedSpan,
} from "./otlp-signals-decode.ts";

export const METRICS_EXPORT_PATH = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";
export const LOGS_EXPORT_PATH = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
export const TRACES_EXPORT_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

export interface GrpcRequest {
  readonly index: number;
  readonly bytes: number;
  /** The gRPC status the receiver answered (0 = OK), or -1 while left unanswered. */
  readonly code: number;
  /** Request metadata, one value per key. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface GrpcTls {
  readonly key: string;
  readonly cert: string;
  /** The CA client certificates must chain to; with `requireClientCert`, mTLS. */
  readonly clientCa?: string;
  readonly requireClientCert?: boolean;
}

/** The answer for request i: a gRPC status code (0 = OK), or "hang" to never answer. */
export type GrpcPolicy = (i: number) => number | "hang";

export interface GrpcReceiver {
  /** `http://127.0.0.1:<port>` or `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  readonly requests: GrpcRequest[];
  /** Points of requests answered OK only: what a backend stored. */
  readonly points: ReceivedPoint[];
  /** Log records and spans of requests answered OK (LOGS_EXPORT_PATH / TRACES_EXPORT_PATH). */
  readonly logs: ReceivedLog[];
  readonly spans: ReceivedSpan[];
  setStatus(policy: GrpcPolicy): void;
  /** Stops listening (connections dropped); `restart` listens again on the same port. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const identity = (b: Buffer): Buffer => b;
const service = (path: string) => ({
  export: {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
});

function metadataRecord(m: Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.getMap())) out[k] = typeof v === "string" ? v : v.toString("base64");
  return out;
}

export async function startGrpcReceiver(
  /** `path`: the service method (metrics by default; other signals' requests are recorded, not decoded). */
  opts: { policy?: GrpcPolicy; tls?: GrpcTls; path?: string } = {},
): Promise<GrpcReceiver> {
  const requests: GrpcRequest[] = [];
  const points: ReceivedPoint[] = [];
  const logs: ReceivedLog[] = [];
  const spans: ReceivedSpan[] = [];
  const path = opts.path ?? METRICS_EXPORT_PATH;
  let policy: GrpcPolicy = opts.policy ?? (() => status.OK);
  const hanging: sendUnaryData<Buffer>[] = [];
  const creds = () =>
    opts.tls
      ? ServerCredentials.createSsl(
          opts.tls.clientCa ? Buffer.from(opts.tls.clientCa) : null,
          [{ private_key: Buffer.from(opts.tls.key), cert_chain: Buffer.from(opts.tls.cert) }],
          opts.tls.requireClientCert === true,
        )
      : ServerCredentials.createInsecure();

  const handler = (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
    const index = requests.length;
    const answer = policy(index);
    const body = call.request;
    requests.push({
      index,
      bytes: body.length,
      code: answer === "hang" ? -1 : answer,
      metadata: metadataRecord(call.metadata),
    });
    if (answer === "hang") {
      hanging.push(callback);
      return;
    }
    if (answer === status.OK) {
      if (path === METRICS_EXPORT_PATH) points.push(...decodeProtobuf(body, index));
      else if (path === LOGS_EXPORT_PATH) logs.push(...decodeLogsProtobuf(body, index));
      else if (path === TRACES_EXPORT_PATH) spans.push(...decodeSpansProtobuf(body, index));
      // An empty ExportMetricsServiceResponse (no partial_success) is zero bytes.
      callback(null, Buffer.alloc(0));
      return;
    }
    callback({ code: answer, details: `test receiver answers ${status[answer]}` });
  };

  let server: Server | undefined;
  const listen = async (port: number): Promise<number> => {
    const s = new Server();
    s.addService(service(path), { export: handler });
    const bound = await new Promise<number>((resolve, reject) =>
      s.bindAsync(`127.0.0.1:${port}`, creds(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    server = s;
    return bound;
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    hanging.splice(0);
    // forceShutdown: cancels calls in flight, like a collector that dies.
    s?.forceShutdown();
  };

  const port = await listen(0);
  return {
    url: `${opts.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    requests,
    points,
    logs,
    spans,
    setStatus(p) {
      policy = p;
    },
    stop,
    async restart() {
      await stop();
      await listen(port);
    },
    close: stop,
  };
}

/**
 * A TCP relay in front of a receiver that counts the bytes clients send, to see compression
 * on the wire (gRPC servers hide the grpc-encoding header from handlers).
 */
export async function startByteCounter(
  targetPort: number,
): Promise<{ port: number; bytes(): number; close(): Promise<void> }> {
  const { createServer, connect } = await import("node:net");
  let total = 0;
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host: "127.0.0.1", port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    client.on("data", (d: Buffer) => {
      total += d.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", end);
  });
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const addr = server.address();
  if (addr === null || typeof addr === "string") throw new Error("no port");
  return {
    port: addr.port,
    bytes: () => total,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
