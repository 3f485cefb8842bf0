/**
 * A slow OTLP/HTTP backend for the benchmarks (127.0.0.1): answers 200, one request at a time,
 * either a fixed time per request (a remote gateway: `perRequestMs`) or at a byte rate (a slow
 * link: `bytesPerSecond`, the answer leaves once the body would have crossed it). Counts
 * requests and bytes; bodies are not kept.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type Throttle = { readonly perRequestMs: number } | { readonly bytesPerSecond: number };

export interface ThrottledReceiver {
  /** `http://127.0.0.1:<port>/v1/metrics`. */
  readonly url: string;
  /** Requests received and their bytes, since the start. */
  counts(): { requests: number; bytes: number };
  close(): Promise<void>;
}

export async function throttledReceiver(throttle: Throttle): Promise<ThrottledReceiver> {
  let requests = 0;
  let bytes = 0;
  // The backend serves one request at a time: each answer waits for the ones before it.
  let busyUntil = 0;
  const server = createServer((req, res) => {
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
    });
    req.on("end", () => {
      // What went out, answered or not (a client that gave up still sent it).
      requests++;
      bytes += size;
      const cost =
        "perRequestMs" in throttle ? throttle.perRequestMs : (size / throttle.bytesPerSecond) * 1000;
      const now = performance.now();
      busyUntil = Math.max(busyUntil, now) + cost;
      setTimeout(() => {
        res.statusCode = 200;
        res.setHeader("content-type", "application/x-protobuf");
        res.end();
      }, busyUntil - now);
    });
  });
  await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`,
    counts: () => ({ requests, bytes }),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
