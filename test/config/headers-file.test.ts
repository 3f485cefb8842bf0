import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/config.ts";
import { parseHeadersText, readHeadersFile } from "../../src/config/headers-file.ts";
import { configErrorOf } from "../helpers/config-error.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "headers-file-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string, mode = 0o600): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
}

const ref = (path: string) => ({ path, via: "CLINE_OTEL_HEADERS_FILE" });

describe("parseHeadersText", () => {
  it("name=value lines; comments, blank lines, CRLF and a BOM allowed; the first = splits", () => {
    const text =
      "\uFEFF# Honeycomb\r\n\r\nx-honeycomb-team = abc=def==\r\n  # indented comment\nAuthorization=Bearer a b#c\n";
    expect(parseHeadersText(text, "f")).toEqual({
      "x-honeycomb-team": "abc=def==",
      authorization: "Bearer a b#c",
    });
  });

  it.each([
    ["SECRETKEY123", /^f line 2 is not name=value \(the line is not shown: it may hold a secret\)/],
    ["=SECRETKEY123", /^f line 2 is not name=value/],
    ["x-key=", /^f line 2 has an empty value/],
    ['x-key="SECRETKEY123"', /^f line 2 has its value in quotes; write name=value without quotes/],
    [
      "Bearer SECRETKEY123=x",
      /^f line 2 has a header name with characters a header name cannot have \(not shown\)/,
    ],
    ["X-A=SECRETKEY123", /^f line 2 sets the same header as line 1; keep one of them$/],
  ])("%j is refused by line number, never echoed", (line, re) => {
    const msg = configErrorOf(() => parseHeadersText(`x-a=1\n${line}\n`, "f"));
    expect(msg).toMatch(re);
    expect(msg).not.toContain("SECRETKEY123");
  });
});

describe("readHeadersFile", () => {
  it("reads a 0600 file", () => {
    expect(readHeadersFile(ref(file("h", "x-api-key=k1\n")))).toEqual({ "x-api-key": "k1" });
  });

  it.each([0o640, 0o604, 0o660, 0o644, 0o700 | 0o010])("mode %o is refused with the chmod fix", (mode) => {
    const p = file("h", "x-api-key=SECRET\n", mode);
    const msg = configErrorOf(() => readHeadersFile(ref(p)));
    expect(msg).toBe(
      `CLINE_OTEL_HEADERS_FILE (${p}) holds secrets but group or others may access it (mode ${mode.toString(8).padStart(4, "0")}); run: chmod 600 ${p}`,
    );
    expect(msg).not.toContain("SECRET");
  });

  it("Windows has no mode bits to check", () => {
    expect(readHeadersFile(ref(file("h", "x-a=1\n", 0o644)), "win32")).toEqual({ "x-a": "1" });
  });

  it("a missing file, a directory and a huge file are refused, naming the file", () => {
    const missing = join(dir, "nope");
    expect(configErrorOf(() => readHeadersFile(ref(missing)))).toBe(
      `CLINE_OTEL_HEADERS_FILE (${missing}) cannot be read (ENOENT); create it with name=value lines and chmod 600 it`,
    );
    const d = join(dir, "d");
    mkdirSync(d, { mode: 0o700 });
    expect(configErrorOf(() => readHeadersFile(ref(d)))).toMatch(/is not a regular file/);
    expect(configErrorOf(() => readHeadersFile(ref(file("big", "x".repeat(70_000)))))).toMatch(
      /is 70000 bytes; a headers file is at most 65536 bytes/,
    );
  });
});

describe("the headers file in resolveConfig", () => {
  const cfg = (env: Record<string, string>, flags: Record<string, unknown> = {}) =>
    resolveConfig({ stateDir: "/tmp/s", ...flags }, env, "/home/u", dir);

  it("CLINE_OTEL_HEADERS_FILE (relative to the working dir) overrides the environment's headers", () => {
    file("h", "x-honeycomb-team=from-file\n");
    const c = cfg({
      CLINE_OTEL_HEADERS_FILE: "h",
      OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=env,x-other=1",
    });
    expect(c.export.otlp.headers).toEqual({ "x-honeycomb-team": "from-file", "x-other": "1" });
  });

  it("--headers-file beats CLINE_OTEL_HEADERS_FILE and names itself in errors", () => {
    file("a", "x-k=a\n");
    file("b", "x-k=b\n");
    expect(cfg({ CLINE_OTEL_HEADERS_FILE: "a" }, { headersFile: "b" }).export.otlp.headers).toEqual({
      "x-k": "b",
    });
    file("bad", "oops\n");
    expect(configErrorOf(() => cfg({ CLINE_OTEL_HEADERS_FILE: "a" }, { headersFile: "bad" }))).toMatch(
      new RegExp(`^--headers-file \\(${join(dir, "bad")}\\) line 1 is not name=value`),
    );
    expect(configErrorOf(() => cfg({}, { headersFile: " " }))).toMatch(/--headers-file is empty/);
  });

  it("gRPC checks of file headers name the file", () => {
    file("h", "x-token-bin=abc\n");
    expect(
      configErrorOf(() => cfg({ CLINE_OTEL_HEADERS_FILE: "h", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })),
    ).toMatch(/^CLINE_OTEL_HEADERS_FILE \(.*\/h\): header "x-token-bin" is reserved in gRPC/);
  });
});
