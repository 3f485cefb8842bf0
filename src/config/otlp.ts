/**
 * OTLP exporter settings for one signal (metrics now; logs and traces share them), resolved
 * once from the standard environment variables (signal-specific first, then the general one,
 * then the spec's defaults) plus cline-otel's headers file, into a frozen object. Exporters
 * are built from this object only (src/export/otlp-exporters.ts), so the SDK's own reading
 * of the environment never decides anything.
 *
 * Spec: https://opentelemetry.io/docs/specs/otel/protocol/exporter/
 */
import type { KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Env, envStr } from "./env.ts";
import { boolValue, ConfigError, oneOf, parseKeyValueList, positiveNumber } from "./parse.ts";

export type OtlpSignal = "metrics" | "logs" | "traces";
export type OtlpProtocol = "grpc" | "http/protobuf" | "http/json";
export type OtlpCompression = "none" | "gzip";

export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ["grpc", "http/protobuf", "http/json"];

/** A PEM file named by a variable, read once at start-up. */
export interface PemFile {
  /** Absolute path, for messages. */
  readonly path: string;
  /** The variable that named it. */
  readonly via: string;
  /** The file's text. A client key is a secret: never log it. */
  readonly pem: string;
}

/** TLS material of a TLS connection; all undefined = the system's roots, no client certificate. */
export interface OtlpTls {
  readonly ca: PemFile | undefined;
  readonly clientCertificate: PemFile | undefined;
  readonly clientKey: PemFile | undefined;
}

export interface OtlpSettings {
  readonly signal: OtlpSignal;
  readonly protocol: OtlpProtocol;
  /**
   * http/*: the signal's full URL (…/v1/metrics). grpc: `http://host:port` (plaintext) or
   * `https://host:port` (TLS), without a path (gRPC has none).
   */
  readonly endpoint: string;
  /** Header (gRPC: metadata) names are lowercase. Values are secrets (API keys): never log them. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly compression: OtlpCompression;
  /** Present when the connection uses TLS (an https:// endpoint); undefined = plaintext. */
  readonly tls: OtlpTls | undefined;
}

/** Headers from cline-otel's headers file (src/config/headers-file.ts), shared by every signal. */
export interface SharedOtlpInput {
  readonly fileHeaders: Readonly<Record<string, string>>;
  /** Names the headers file in messages (flag or variable, and path). */
  readonly fileVia: string;
  readonly cwd: string;
}

const SIGNAL_VAR: Record<OtlpSignal, string> = { metrics: "METRICS", logs: "LOGS", traces: "TRACES" };
const HTTP_PATH: Record<OtlpSignal, string> = {
  metrics: "v1/metrics",
  logs: "v1/logs",
  traces: "v1/traces",
};

/** The signal-specific variable if set, else the general one: its name and value. */
function pick(env: Env, signal: OtlpSignal, suffix: string): { name: string; value: string | undefined } {
  const specific = `OTEL_EXPORTER_OTLP_${SIGNAL_VAR[signal]}_${suffix}`;
  const v = envStr(env, specific);
  if (v !== undefined) return { name: specific, value: v };
  const general = `OTEL_EXPORTER_OTLP_${suffix}`;
  return { name: general, value: envStr(env, general) };
}

export function resolveOtlpSettings(signal: OtlpSignal, env: Env, shared: SharedOtlpInput): OtlpSettings {
  const proto = pick(env, signal, "PROTOCOL");
  const protocol =
    proto.value === undefined ? "http/protobuf" : oneOf(proto.value, OTLP_PROTOCOLS, proto.name);
  const insecureVar = pick(env, signal, "INSECURE");
  const insecure = insecureVar.value !== undefined && boolValue(insecureVar.value, insecureVar.name);
  const endpoint = resolveEndpoint(env, signal, protocol, insecure);
  const timeout = pick(env, signal, "TIMEOUT");
  const compression = pick(env, signal, "COMPRESSION");
  return Object.freeze({
    signal,
    protocol,
    endpoint,
    headers: Object.freeze(resolveHeaders(env, signal, protocol, shared)),
    timeoutMs:
      timeout.value === undefined ? 10_000 : positiveNumber(timeout.value, timeout.name, "milliseconds"),
    compression:
      compression.value === undefined
        ? "none"
        : oneOf(compression.value, ["gzip", "none"] as const, compression.name),
    tls: endpoint.startsWith("https:") ? resolveTls(env, signal, shared.cwd) : undefined,
  });
}

/**
 * http/*: the signal-specific URL as is, the general one + /v1/<signal>, else localhost:4318.
 * grpc: either URL without its path (gRPC ignores it), else localhost:4317; an endpoint without
 * a scheme (`collector:4317`) is TLS unless OTEL_EXPORTER_OTLP_INSECURE=true, as the spec says.
 */
function resolveEndpoint(env: Env, signal: OtlpSignal, protocol: OtlpProtocol, insecure: boolean): string {
  const specificVar = `OTEL_EXPORTER_OTLP_${SIGNAL_VAR[signal]}_ENDPOINT`;
  const specific = envStr(env, specificVar);
  const general = envStr(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  const via = specific !== undefined ? specificVar : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const raw = specific ?? general;
  if (protocol === "grpc") {
    if (raw === undefined) return "http://localhost:4317";
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `${insecure ? "http" : "https"}://${raw}`;
    const url = parseUrl(withScheme, raw, via, "http://localhost:4317");
    return `${url.protocol}//${url.host}`;
  }
  const full =
    specific ?? (general !== undefined ? `${general.replace(/\/+$/, "")}/${HTTP_PATH[signal]}` : undefined);
  if (full === undefined) return `http://localhost:4318/${HTTP_PATH[signal]}`;
  return parseUrl(full, raw ?? full, via, "http://localhost:4318").toString();
}

function parseUrl(text: string, raw: string, via: string, example: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${via} is "${raw}", not a URL; e.g. ${example}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(
      `${via} is "${raw}"; give an http:// (plaintext) or https:// (TLS) URL, e.g. ${example}`,
    );
  }
  if (url.host === "") throw new ConfigError(`${via} is "${raw}", which names no host; e.g. ${example}`);
  return url;
}

/** HTTP header name characters (RFC 9110 token); gRPC metadata keys are narrower. */
const HTTP_HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
const GRPC_METADATA_KEY = /^[0-9a-z_.-]+$/;
/** gRPC metadata values are printable ASCII; HTTP header values any visible Latin-1 and tabs. */
const GRPC_VALUE = /^[\x20-\x7e]*$/;
const HTTP_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The general variable, overridden per key by the signal-specific one, overridden by the
 * headers file. Names are lowercased (HTTP names are case-insensitive, gRPC requires lowercase),
 * and checked here so a bad one stops start-up instead of failing every export. Messages name
 * the variable and the key, never a value.
 */
function resolveHeaders(
  env: Env,
  signal: OtlpSignal,
  protocol: OtlpProtocol,
  shared: SharedOtlpInput,
): Record<string, string> {
  const specificVar = `OTEL_EXPORTER_OTLP_${SIGNAL_VAR[signal]}_HEADERS`;
  const sources: [string, Readonly<Record<string, string>>][] = [
    [
      "OTEL_EXPORTER_OTLP_HEADERS",
      parseKeyValueList(envStr(env, "OTEL_EXPORTER_OTLP_HEADERS") ?? "", "OTEL_EXPORTER_OTLP_HEADERS", true),
    ],
    [specificVar, parseKeyValueList(envStr(env, specificVar) ?? "", specificVar, true)],
    [shared.fileVia, shared.fileHeaders],
  ];
  const out: Record<string, string> = {};
  for (const [via, headers] of sources) {
    for (const [rawKey, value] of Object.entries(headers)) {
      const key = rawKey.toLowerCase();
      checkHeader(key, value, via, protocol);
      out[key] = value;
    }
  }
  return out;
}

function checkHeader(key: string, value: string, via: string, protocol: OtlpProtocol): void {
  // A key is shown only once it is known to be a plain header name (not a pasted secret).
  if (!HTTP_HEADER_NAME.test(key)) {
    throw new ConfigError(
      `${via} has a header name with characters a header name cannot have; use name=value with names like x-api-key`,
    );
  }
  if (protocol === "grpc") {
    if (!GRPC_METADATA_KEY.test(key)) {
      throw new ConfigError(
        `${via}: header "${key}" is not a valid gRPC metadata key; use letters, digits, "-", "_" and "."`,
      );
    }
    if (key.endsWith("-bin") || key.startsWith("grpc-")) {
      throw new ConfigError(
        `${via}: header "${key}" is reserved in gRPC (-bin suffix, grpc- prefix); choose another name`,
      );
    }
  }
  if (!(protocol === "grpc" ? GRPC_VALUE : HTTP_VALUE).test(value)) {
    throw new ConfigError(
      `${via}: the value of header "${key}" has control${protocol === "grpc" ? " or non-ASCII" : ""} characters; headers carry one line of ${protocol === "grpc" ? "printable ASCII" : "text"} (the value is not shown)`,
    );
  }
}

/**
 * Certificate files are read once here, so an unreadable or wrong file stops start-up with
 * exit 2 (the SDK would warn at debug level and export without it). Checked: the CA and the
 * client certificate parse as X.509, the key as a private key, and the key matches the certificate.
 */
function resolveTls(env: Env, signal: OtlpSignal, cwd: string): OtlpTls {
  const ca = readPem(pick(env, signal, "CERTIFICATE"), cwd);
  const clientCertificate = readPem(pick(env, signal, "CLIENT_CERTIFICATE"), cwd);
  const clientKey = readPem(pick(env, signal, "CLIENT_KEY"), cwd);
  if (ca) certificateOf(ca, "a PEM certificate (the CA that signed the collector's certificate)");
  const half =
    clientKey === undefined ? clientCertificate : clientCertificate === undefined ? clientKey : undefined;
  if (half !== undefined) {
    const missing =
      half === clientKey
        ? half.via.replace("CLIENT_KEY", "CLIENT_CERTIFICATE")
        : half.via.replace("CLIENT_CERTIFICATE", "CLIENT_KEY");
    throw new ConfigError(
      `${half.via} is set but ${missing} is not; mTLS needs both the client certificate and its private key`,
    );
  }
  if (clientCertificate && clientKey) {
    const cert = certificateOf(clientCertificate, "a PEM client certificate");
    let key: KeyObject;
    try {
      key = crypto().createPrivateKey(clientKey.pem);
    } catch {
      throw new ConfigError(
        `${clientKey.via} names ${clientKey.path}, which is not a PEM private key (unencrypted); its content is not shown`,
      );
    }
    if (!cert.checkPrivateKey(key)) {
      throw new ConfigError(
        `${clientKey.via} (${clientKey.path}) is not the private key of ${clientCertificate.via} (${clientCertificate.path})`,
      );
    }
  }
  return Object.freeze({ ca, clientCertificate, clientKey });
}

function readPem(v: { name: string; value: string | undefined }, cwd: string): PemFile | undefined {
  if (v.value === undefined) return undefined;
  const path = resolve(cwd, v.value);
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError(
      `${v.name} names ${path}, which cannot be read (${code}); give a readable PEM file`,
    );
  }
  return Object.freeze({ path, via: v.name, pem });
}

/**
 * node:crypto when a PEM file is to be checked: commands that read no OTLP settings (`paths`,
 * `report`) do not load it at start-up (a few ms of Node's own modules).
 */
const crypto = () => process.getBuiltinModule("node:crypto");

function certificateOf(f: PemFile, what: string): X509Certificate {
  try {
    return new (crypto().X509Certificate)(f.pem);
  } catch {
    throw new ConfigError(`${f.via} names ${f.path}, which is not ${what}`);
  }
}
