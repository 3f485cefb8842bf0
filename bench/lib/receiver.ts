/**
 * A local OTLP/HTTP receiver for the benchmarks: answers 200 and counts requests and bytes
 * (bodies are not kept, so a large export costs the bench no memory).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface CountingReceiver {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The counts since the last take, and resets them. */
  take(): { bytes: number; requests: number };
  close(): Promise<void>;
}

export async function countingReceiver(): Promise<CountingReceiver> {
  let bytes = 0;
  let requests = 0;
  const server = createServer((req, res) => {
    req.on("data", (c: Buffer) => {
      bytes += c.length;
    });
    req.on("end", () => {
      requests++;
      res.statusCode = 200;
      res.setHeader("content-type", "application/x-protobuf");
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => {
      const r = { bytes, requests };
      bytes = 0;
      requests = 0;
      return r;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
