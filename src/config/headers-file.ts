/**
 * cline-otel's headers file: OTLP headers (API keys) kept out of the environment. Cline 3.0.65
 * attaches every header in OTEL_EXPORTER_OTLP_HEADERS of its own environment to the telemetry it
 * sends to its vendor, so a key exported in the shell that runs `cline` leaves the machine; a file
 * only cline-otel reads keeps it here.
 *
 * Format (docs/backends.md): one `name=value` per line; blank lines and lines starting with `#`
 * are ignored; the first `=` splits; name and value are trimmed; the value is taken literally
 * (no quotes, no escapes, no percent-decoding). Messages name the file and the line number,
 * never a line's content: any line may hold a secret.
 */
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { ConfigError } from "./parse.ts";

/** Large enough for any set of headers; a bigger file is a wrong path, not headers. */
const MAX_BYTES = 64 * 1024;
/** RFC 9110 token, lowercased. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

export interface HeadersFileRef {
  /** Absolute path. */
  readonly path: string;
  /** The flag or variable that named it. */
  readonly via: string;
}

/** Reads and parses the file; refuses one that group or others may access. */
export function readHeadersFile(
  ref: HeadersFileRef,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const where = `${ref.via} (${ref.path})`;
  let text: string;
  let fd: number;
  try {
    fd = openSync(ref.path, "r");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError(
      `${where} cannot be read (${code}); create it with name=value lines and chmod 600 it`,
    );
  }
  try {
    // Checked on the open file, so what is checked is what is read.
    const st = fstatSync(fd);
    if (!st.isFile())
      throw new ConfigError(`${where} is not a regular file; give a file of name=value lines`);
    // POSIX permissions only: Windows has no group/other mode bits.
    if (platform !== "win32" && (st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
      throw new ConfigError(
        `${where} holds secrets but group or others may access it (mode ${mode}); run: chmod 600 ${ref.path}`,
      );
    }
    if (st.size > MAX_BYTES) {
      throw new ConfigError(`${where} is ${st.size} bytes; a headers file is at most ${MAX_BYTES} bytes`);
    }
    text = readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
  return parseHeadersText(text, where);
}

/** Parses `name=value` lines; errors give the line number only. */
export function parseHeadersText(text: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  const firstLine = new Map<string, number>();
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const eq = line.indexOf("=");
    if (eq <= 0) {
      throw new ConfigError(
        `${where} line ${n} is not name=value (the line is not shown: it may hold a secret); write one name=value per line, # for comments`,
      );
    }
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line.slice(eq + 1).trim();
    if (!HEADER_NAME.test(key)) {
      throw new ConfigError(
        `${where} line ${n} has a header name with characters a header name cannot have (not shown); names look like x-api-key`,
      );
    }
    if (value === "") throw new ConfigError(`${where} line ${n} has an empty value; write name=value`);
    if (/^(["']).*\1$/.test(value) && value.length >= 2) {
      throw new ConfigError(
        `${where} line ${n} has its value in quotes; write name=value without quotes (values are taken literally)`,
      );
    }
    const seen = firstLine.get(key);
    if (seen !== undefined) {
      throw new ConfigError(`${where} line ${n} sets the same header as line ${seen}; keep one of them`);
    }
    firstLine.set(key, n);
    out[key] = value;
  });
  return out;
}
