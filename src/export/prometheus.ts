import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";

/** The scrape endpoint could not listen (port taken, bad host): the message says where. */
export class EndpointError extends Error {
  override name = "EndpointError";
}

/**
 * Our own HTTP server in front of the SDK's Prometheus reader (started with
 * preventServerStart): it can bind port 0 (the SDK treats 0 as "use 9464"), report the real
 * address, and tell the caller when a scrape was served in full.
 */
export class PrometheusEndpoint {
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** `onServed(arrivalMs)`: a scrape arriving then was answered 200 (everything older was in it). */
  static start(
    reader: PrometheusExporter,
    host: string,
    port: number,
    onServed: (arrivalMs: number) => void,
  ): Promise<PrometheusEndpoint> {
    const server = createServer((req, res) => {
      let path: string;
      try {
        path = new URL(req.url ?? "/", "http://localhost").pathname;
      } catch {
        res.statusCode = 400;
        res.end("bad request");
        return;
      }
      if (path !== "/metrics") {
        res.statusCode = 404;
        res.end();
        return;
      }
      const arrival = Date.now();
      res.on("finish", () => {
        if (res.statusCode === 200) onServed(arrival);
      });
      reader.getMetricsRequestHandler(req, res);
    });
    return new Promise((resolve, reject) => {
      server.once("error", (e) =>
        reject(
          new EndpointError(
            `cannot serve Prometheus metrics on ${host}:${port}: ${(e as Error).message} (set OTEL_EXPORTER_PROMETHEUS_HOST / OTEL_EXPORTER_PROMETHEUS_PORT)`,
          ),
        ),
      );
      server.listen({ host, port }, () => {
        const a = server.address() as AddressInfo;
        const h = a.family === "IPv6" ? `[${a.address}]` : a.address;
        resolve(new PrometheusEndpoint(server, `http://${h}:${a.port}/metrics`));
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
