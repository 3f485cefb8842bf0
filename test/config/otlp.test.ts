import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpSignal, resolveOtlpSettings } from "../../src/config/otlp.ts";
import { makeTestPki, type TestPki } from "../export/helpers/tls.ts";
import { configErrorOf } from "../helpers/config-error.ts";

const NO_FILE = { fileHeaders: {}, fileVia: "the headers file", cwd: "/cwd" };
const otlp = (env: Record<string, string>, signal: OtlpSignal = "metrics", shared = NO_FILE) =>
  resolveOtlpSettings(signal, env, shared);

describe("resolveOtlpSettings: protocol and endpoint", () => {
  it.each([
    ["metrics", "http://localhost:4318/v1/metrics"],
    ["logs", "http://localhost:4318/v1/logs"],
    ["traces", "http://localhost:4318/v1/traces"],
  ] as const)("%s over HTTP defaults to %s", (signal, url) => {
    const s = otlp({}, signal);
    expect(s).toMatchObject({
      signal,
      protocol: "http/protobuf",
      endpoint: url,
      timeoutMs: 10_000,
      compression: "none",
      tls: undefined,
    });
    expect(Object.isFrozen(s)).toBe(true);
    expect(otlp({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://c:4318/" }, signal).endpoint).toBe(
      url.replace("http://localhost", "https://c"),
    );
  });

  it("grpc: localhost:4317 by default, one endpoint for every signal, no path", () => {
    for (const signal of ["metrics", "logs", "traces"] as const) {
      expect(otlp({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, signal).endpoint).toBe("http://localhost:4317");
      expect(
        otlp({ OTEL_EXPORTER_OTLP_PROTOCOL: "GRPC", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317/" }, signal)
          .endpoint,
      ).toBe("http://c:4317");
    }
  });

  it("the signal-specific protocol wins, per signal", () => {
    const env = { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/json" };
    expect(otlp(env, "metrics").protocol).toBe("grpc");
    expect(otlp(env, "logs")).toMatchObject({
      protocol: "http/json",
      endpoint: "http://localhost:4318/v1/logs",
    });
    expect(otlp(env, "traces").protocol).toBe("grpc");
  });

  it("grpc without a scheme is TLS unless OTEL_EXPORTER_OTLP_INSECURE=true (the spec's rule)", () => {
    const g = { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4317" };
    expect(otlp(g).endpoint).toBe("https://collector:4317");
    expect(otlp(g).tls).toEqual({ ca: undefined, clientCertificate: undefined, clientKey: undefined });
    expect(otlp({ ...g, OTEL_EXPORTER_OTLP_INSECURE: "true" })).toMatchObject({
      endpoint: "http://collector:4317",
      tls: undefined,
    });
    expect(
      otlp({ ...g, OTEL_EXPORTER_OTLP_INSECURE: "true", OTEL_EXPORTER_OTLP_METRICS_INSECURE: "false" })
        .endpoint,
    ).toBe("https://collector:4317");
    // A scheme decides by itself.
    expect(
      otlp({
        ...g,
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector:4317",
        OTEL_EXPORTER_OTLP_INSECURE: "true",
      }).endpoint,
    ).toBe("https://collector:4317");
  });

  it("timeout and compression: signal-specific first", () => {
    const s = otlp({
      OTEL_EXPORTER_OTLP_TIMEOUT: "5000",
      OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: "700",
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
    });
    expect(s).toMatchObject({ timeoutMs: 700, compression: "gzip" });
    expect(
      otlp({ OTEL_EXPORTER_OTLP_COMPRESSION: "gzip", OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: "none" })
        .compression,
    ).toBe("none");
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: "udp" },
      /^OTEL_EXPORTER_OTLP_PROTOCOL is "udp"; accepted values: grpc, http\/protobuf, http\/json$/,
    ],
    [
      { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http" },
      /^OTEL_EXPORTER_OTLP_METRICS_PROTOCOL is "http"; accepted/,
    ],
    [
      { OTEL_EXPORTER_OTLP_COMPRESSION: "zstd" },
      /OTEL_EXPORTER_OTLP_COMPRESSION is "zstd"; accepted values: gzip, none/,
    ],
    [
      { OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: "-1" },
      /OTEL_EXPORTER_OTLP_METRICS_TIMEOUT is "-1"; give a positive number/,
    ],
    [
      { OTEL_EXPORTER_OTLP_INSECURE: "sure" },
      /OTEL_EXPORTER_OTLP_INSECURE is "sure"; accepted values: true, false/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
      /OTEL_EXPORTER_OTLP_ENDPOINT is "collector:4318"; give an http:\/\/ \(plaintext\) or https:\/\/ \(TLS\) URL/,
    ],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "unix:///run/otel.sock" },
      /OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is "unix:\/\/\/run\/otel.sock"; give an http:\/\/ \(plaintext\) or https:\/\/ \(TLS\) URL, e.g. http:\/\/localhost:4317/,
    ],
  ])("%j is refused, naming the variable and what it accepts", (env, re) => {
    expect(configErrorOf(() => otlp(env))).toMatch(re);
  });
});

describe("resolveOtlpSettings: headers", () => {
  it("general < signal-specific < headers file, key by key; names lowercased", () => {
    const s = otlp(
      { OTEL_EXPORTER_OTLP_HEADERS: "X-A=1,x-b=1,x-c=1", OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-b=2,X-C=2" },
      "metrics",
      { ...NO_FILE, fileHeaders: { "x-c": "3", "x-d": "3" } },
    );
    expect(s.headers).toEqual({ "x-a": "1", "x-b": "2", "x-c": "3", "x-d": "3" });
    expect(Object.isFrozen(s.headers)).toBe(true);
  });

  it("values with control characters are refused without showing them", () => {
    const msg = configErrorOf(() =>
      otlp({}, "metrics", {
        ...NO_FILE,
        fileVia: "CLINE_OTEL_HEADERS_FILE (/h)",
        fileHeaders: { "x-k": "SECRET\u0007" },
      }),
    );
    expect(msg).toMatch(/^CLINE_OTEL_HEADERS_FILE \(\/h\): the value of header "x-k" has control characters/);
    expect(msg).not.toContain("SECRET");
  });

  it("a header name that is not a token is refused without being shown (it may be a pasted key)", () => {
    const msg = configErrorOf(() => otlp({ OTEL_EXPORTER_OTLP_HEADERS: "Bearer SECRET=x" }));
    expect(msg).toMatch(/^OTEL_EXPORTER_OTLP_HEADERS has a header name with characters/);
    expect(msg).not.toContain("SECRET");
  });

  it("grpc refuses metadata keys gRPC cannot carry, naming the key", () => {
    const g = { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" };
    expect(configErrorOf(() => otlp({ ...g, OTEL_EXPORTER_OTLP_HEADERS: "x-key-bin=abc" }))).toMatch(
      /header "x-key-bin" is reserved in gRPC/,
    );
    expect(configErrorOf(() => otlp({ ...g, OTEL_EXPORTER_OTLP_HEADERS: "x!y=abc" }))).toMatch(
      /header "x!y" is not a valid gRPC metadata key/,
    );
    const msg = configErrorOf(() => otlp({ ...g, OTEL_EXPORTER_OTLP_HEADERS: "x-k=caf%C3%A9SECRET" }));
    expect(msg).toMatch(/the value of header "x-k" has control or non-ASCII characters/);
    expect(msg).not.toContain("SECRET");
    // The same value is fine over HTTP (Latin-1 header text).
    expect(otlp({ OTEL_EXPORTER_OTLP_HEADERS: "x-k=%C3%A9" }).headers["x-k"]).toBe("é");
  });
});

describe("resolveOtlpSettings: TLS files", () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makeTestPki();
  });
  afterAll(() => pki.dispose());

  it("are read once for an https endpoint, signal-specific first; ignored for plaintext", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://c:4318",
      OTEL_EXPORTER_OTLP_CERTIFICATE: pki.files.otherCa,
      OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE: pki.files.ca,
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: pki.files.clientCert,
      OTEL_EXPORTER_OTLP_CLIENT_KEY: pki.files.clientKey,
    };
    const s = otlp(env);
    expect(s.tls?.ca).toMatchObject({ path: pki.files.ca, via: "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE" });
    expect(s.tls?.ca?.pem).toBe(pki.pem.ca);
    expect(s.tls?.clientKey?.via).toBe("OTEL_EXPORTER_OTLP_CLIENT_KEY");
    expect(otlp(env, "logs").tls?.ca?.path).toBe(pki.files.otherCa);
    expect(otlp({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).tls).toBeUndefined();
  });

  it("relative paths resolve against the working directory", () => {
    const s = otlp(
      { OTEL_EXPORTER_OTLP_ENDPOINT: "https://c", OTEL_EXPORTER_OTLP_CERTIFICATE: "ca.crt" },
      "metrics",
      { ...NO_FILE, cwd: pki.dir },
    );
    expect(s.tls?.ca?.path).toBe(pki.files.ca);
  });

  it("an unreadable, wrong or half-configured file stops start-up, naming the variable and the file", () => {
    const https = { OTEL_EXPORTER_OTLP_ENDPOINT: "https://c:4318" };
    expect(
      configErrorOf(() => otlp({ ...https, OTEL_EXPORTER_OTLP_CERTIFICATE: "/nonexistent/ca.pem" })),
    ).toBe(
      "OTEL_EXPORTER_OTLP_CERTIFICATE names /nonexistent/ca.pem, which cannot be read (ENOENT); give a readable PEM file",
    );
    const notPem = join(pki.dir, "not-a-cert.pem");
    writeFileSync(notPem, "hello\n");
    expect(configErrorOf(() => otlp({ ...https, OTEL_EXPORTER_OTLP_CERTIFICATE: notPem }))).toMatch(
      /^OTEL_EXPORTER_OTLP_CERTIFICATE names .*not-a-cert.pem, which is not a PEM certificate/,
    );
    expect(configErrorOf(() => otlp({ ...https, OTEL_EXPORTER_OTLP_CLIENT_KEY: pki.files.clientKey }))).toBe(
      "OTEL_EXPORTER_OTLP_CLIENT_KEY is set but OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is not; mTLS needs both the client certificate and its private key",
    );
    expect(
      configErrorOf(() =>
        otlp({ ...https, OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE: pki.files.clientCert }),
      ),
    ).toMatch(
      /^OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE is set but OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY is not/,
    );
    // The server's key is a real key, but not the client certificate's: never shown.
    const mismatch = configErrorOf(() =>
      otlp({
        ...https,
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: pki.files.clientCert,
        OTEL_EXPORTER_OTLP_CLIENT_KEY: pki.files.serverKey,
      }),
    );
    expect(mismatch).toMatch(/is not the private key of OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE/);
    expect(mismatch).not.toContain("PRIVATE KEY");
    const badKey = join(pki.dir, "bad.key");
    writeFileSync(badKey, "-----BEGIN PRIVATE KEY-----\nSECRETSECRET\n-----END PRIVATE KEY-----\n");
    chmodSync(badKey, 0o600);
    const msg = configErrorOf(() =>
      otlp({
        ...https,
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: pki.files.clientCert,
        OTEL_EXPORTER_OTLP_CLIENT_KEY: badKey,
      }),
    );
    expect(msg).toMatch(/^OTEL_EXPORTER_OTLP_CLIENT_KEY names .*bad.key, which is not a PEM private key/);
    expect(msg).not.toContain("SECRET");
  });
});
