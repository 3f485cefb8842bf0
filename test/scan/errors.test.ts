import { isUtf8 } from "node:buffer";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagesSchema, prng } from "../../bench/lib/messages-doc.ts";
import { ScanError, scanBuffer, scanFile } from "../../src/scan/scanner.ts";
import { arr, num, obj, str } from "../../src/scan/schema.ts";
import { project, scanPieces } from "./helpers.ts";

/** A realistic small messages document (docs/cline-format.md §4 shape, pretty-printed). */
const DOC = JSON.stringify(
  {
    version: 1,
    updated_at: "2026-11-30T05:56:40.728Z",
    agent: "lead",
    sessionId: "1796018200459_9svp0",
    origin: { source: "cli", mode: "user", sessionId: "1796018200459_9svp0", version: "3.0.65" },
    messages: [
      {
        id: "df79ce55",
        role: "user",
        ts: 1796018200520,
        content: [{ type: "text", text: 'say "hi" \\ é 😀' }],
      },
      {
        id: "msg_8Zq37Jxd",
        role: "assistant",
        ts: 1796018200592,
        content: [
          { type: "thinking", thinking: "Plan: …" },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "run_commands",
            input: { commands: ["ls -1"], n: -1.5e-7 },
          },
        ],
        modelInfo: { id: "claude-sonnet-4-5", provider: "anthropic" },
        metrics: {
          inputTokens: 840,
          outputTokens: 313,
          cacheReadTokens: 0,
          cacheWriteTokens: 719,
          cost: 0.00775425,
        },
      },
      {
        id: "msg_Xa2zOv0t",
        role: "user",
        ts: 1796018200614,
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", name: "run_commands", content: '{"a":[true,null]}' },
        ],
      },
    ],
    system_prompt: "You are Cline.",
  },
  null,
  2,
);

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (err instanceof ScanError) return err.code;
    throw err;
  }
  return "ok";
}

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "scan-err-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("truncation", () => {
  it("every proper prefix of a document is `truncated`, never a value (both skippers)", () => {
    const buf = Buffer.from(DOC);
    for (let k = 1; k < buf.length; k++) {
      const prefix = buf.subarray(0, k);
      for (const skipper of ["wasm", "indexOf"] as const) {
        let err: unknown;
        try {
          scanBuffer(prefix, messagesSchema, { skipper });
        } catch (e) {
          err = e;
        }
        expect(err, `prefix ${k} (${skipper})`).toBeInstanceOf(ScanError);
        expect((err as ScanError).code, `prefix ${k}`).toBe("truncated");
        expect((err as ScanError).offset).toBe(k);
        expect((err as ScanError).path).toBe("");
      }
    }
    expect(codeOf(() => scanBuffer(buf, messagesSchema))).toBe("ok");
  });

  it("prefixes fed in 3-byte pieces behave the same", () => {
    const buf = Buffer.from(DOC);
    for (let k = 1; k < buf.length; k += 7) {
      expect(codeOf(() => scanPieces(buf.subarray(0, k), messagesSchema, [3], "wasm"))).toBe("truncated");
    }
  });

  it("a truncated file reports truncated with its path", async () => {
    const path = join(dir, "cut.json");
    writeFileSync(path, Buffer.from(DOC).subarray(0, 500));
    const err = await scanFile(path, messagesSchema, { chunkBytes: 64 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScanError);
    expect(err).toMatchObject({ code: "truncated", offset: 500, path });
  });
});

describe("syntax", () => {
  const cases: [string, string][] = [
    ["trailing comma in object", '{"a":1,}'],
    ["trailing comma in array", "[1,]"],
    ["missing colon", '{"a" 1}'],
    ["missing comma", '{"a":1 "b":2}'],
    ["leading zero", "01"],
    ["bare minus", "[-]"],
    ["dot without digits", "[1.]"],
    ["exponent without digits", "[1e]"],
    ["plus sign", "[+1]"],
    ["hex", "[0x10]"],
    ["bad literal", "[nul]"],
    ["literal with suffix", "[truex]"],
    ["single quotes", "['a']"],
    ["unquoted key", "{a:1}"],
    ["mismatched closer", '{"a":[1}'],
    ["extra closer", "[1]]"],
    ["trailing data", '{"version":1} x'],
    ["two documents", "{} {}"],
    ["comment", "[1 /* no */]"],
    ["NaN", "[NaN]"],
    ["raw control char in a decoded key", '{"ve\u0001rsion":1}'],
    ["bad escape in a decoded string", '{"agent":"\\q"}'],
    ["closer inside an object value position", '{"a":}'],
  ];
  for (const [name, text] of cases) {
    it(name, () => {
      expect(() => JSON.parse(text)).toThrow();
      for (const skipper of ["wasm", "indexOf"] as const) {
        expect(codeOf(() => scanBuffer(Buffer.from(text, "utf8"), messagesSchema, { skipper }))).toBe(
          "syntax",
        );
      }
      expect(codeOf(() => scanPieces(Buffer.from(text, "utf8"), messagesSchema, [1], "wasm"))).toBe("syntax");
    });
  }

  it("reports the offset of the offending byte", () => {
    const err = (() => {
      try {
        scanBuffer(Buffer.from('{"a":[1,2}'), messagesSchema);
      } catch (e) {
        return e as ScanError;
      }
      return null;
    })();
    expect(err?.offset).toBe(9);
  });

  it("skips a leading UTF-8 BOM, also split across chunks", () => {
    const buf = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"version":3}')]);
    expect(scanBuffer(buf, messagesSchema)).toEqual({ version: 3 });
    expect(scanPieces(buf, messagesSchema, [1], "indexOf")).toEqual({ version: 3 });
    expect(codeOf(() => scanBuffer(buf.subarray(0, 2), messagesSchema))).toBe("truncated");
    expect(codeOf(() => scanBuffer(Buffer.from([0xef, 0xbb, 0x7b, 0x7d]), messagesSchema))).toBe("syntax");
    expect(
      codeOf(() => scanBuffer(Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x31]), messagesSchema)),
    ).toBe("syntax");
  });

  it("rejects empty input and whitespace-only input", () => {
    expect(codeOf(() => scanBuffer(new Uint8Array(0), messagesSchema))).toBe("empty");
    expect(codeOf(() => scanBuffer(Buffer.from(" \n\t"), messagesSchema))).toBe("truncated");
  });
});

describe("robustness", () => {
  it("random byte flips give a ScanError or a value, never another exception; valid results match JSON.parse", () => {
    const base = Buffer.from(DOC);
    const rand = prng(99);
    let errors = 0;
    let values = 0;
    for (let n = 0; n < 3000; n++) {
      const buf = Buffer.from(base);
      for (let f = 1 + Math.floor(rand() * 3); f > 0; f--) {
        buf[Math.floor(rand() * buf.length)] =
          rand() < 0.5
            ? Math.floor(rand() * 256)
            : (' "\\{}[],:0-e'.charCodeAt(Math.floor(rand() * 13)) as number);
      }
      for (const skipper of ["wasm", "indexOf"] as const) {
        let got: unknown;
        try {
          got = scanBuffer(buf, messagesSchema, { skipper });
          values++;
        } catch (err) {
          expect(err).toBeInstanceOf(ScanError);
          expect(["syntax", "truncated"]).toContain((err as ScanError).code);
          errors++;
          continue;
        }
        let ref: unknown;
        try {
          ref = JSON.parse(buf.toString("utf8"));
        } catch {
          // invalid JSON the scanner accepted: only tolerated bytes inside skipped strings allow this
          ref = undefined;
        }
        // The reference re-encodes a string, so it cannot say what a `raw` field's bytes were when
        // a flip made them invalid UTF-8 (JSON.parse replaced them): compared on valid UTF-8 only.
        if (ref !== undefined && isUtf8(buf)) expect(got).toEqual(project(messagesSchema, ref));
      }
    }
    expect(errors).toBeGreaterThan(100);
    expect(values).toBeGreaterThan(100);
  });

  it("skips 1,000,000-deep nesting without recursion", () => {
    const depth = 1_000_000;
    const deep = Buffer.from(`${"[".repeat(depth)}${"]".repeat(depth)}`);
    expect(scanBuffer(deep, arr(num))).toEqual([{ wrongType: "array" }]);
    expect(scanBuffer(deep, messagesSchema)).toEqual({ wrongType: "array" });
    expect(scanBuffer(deep, arr(num), { skipper: "wasm" })).toEqual([{ wrongType: "array" }]);
    const objs = Buffer.from(`{"zz":${'{"a":'.repeat(depth)}1${"}".repeat(depth)},"version":2}`);
    expect(scanBuffer(objs, messagesSchema)).toEqual({ version: 2 });
    expect(codeOf(() => scanBuffer(Buffer.from("[".repeat(depth)), arr(num)))).toBe("truncated");
    const mismatched = Buffer.from(`${"[".repeat(depth)}${"]".repeat(depth - 1)}}`);
    expect(codeOf(() => scanBuffer(mismatched, arr(num)))).toBe("syntax");
  });

  it("never decodes huge allow-listed strings or keys (limits are enforced across chunks)", () => {
    const big = "x".repeat(300_000);
    const buf = Buffer.from(`{"agent":"${big}","${big}":1,"sessionId":"ok","version":${"1".repeat(2000)}}`);
    const expected = {
      agent: { wrongType: "too-long" },
      sessionId: "ok",
      version: { wrongType: "too-long" },
    };
    expect(scanBuffer(buf, messagesSchema)).toEqual(expected);
    expect(scanPieces(buf, messagesSchema, [4096], "wasm")).toEqual(expected);
    expect(scanPieces(buf, messagesSchema, [7], "indexOf")).toEqual(expected);
  });

  it("keeps backslash parity across chunk boundaries", () => {
    for (let run = 0; run <= 9; run++) {
      const content = `${"\\".repeat(run * 2)}\\"`;
      const buf = Buffer.from(`{"zz":"a${content}b","agent":"${"\\\\".repeat(run)}x"}`);
      const expected = project(obj({ agent: str() }), JSON.parse(buf.toString()));
      for (let size = 1; size <= 12; size++) {
        expect(scanPieces(buf, obj({ agent: str() }), [size], "wasm")).toEqual(expected);
        expect(scanPieces(buf, obj({ agent: str() }), [size], "indexOf")).toEqual(expected);
      }
    }
  });
});

describe("scanFile", () => {
  it("returns the value, bytes read and fstat before and after", async () => {
    const path = join(dir, "ok.json");
    writeFileSync(path, DOC);
    const st = statSync(path, { bigint: true });
    const res = await scanFile(path, messagesSchema, { chunkBytes: 100 });
    expect(res.value).toEqual(project(messagesSchema, JSON.parse(DOC)));
    expect(res.bytesRead).toBe(Buffer.byteLength(DOC));
    for (const s of [res.statBefore, res.statAfter]) {
      expect(s).toEqual({
        size: Number(st.size),
        mtimeNs: st.mtimeNs,
        ino: Number(st.ino),
        dev: Number(st.dev),
      });
    }
  });

  it("maps ENOENT to io with the errno and path", async () => {
    const path = join(dir, "missing.json");
    const err = await scanFile(path, messagesSchema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScanError);
    expect(err).toMatchObject({ code: "io", path });
    expect((err as Error).message).toContain("ENOENT");
  });

  it("rejects a directory and a FIFO as not-a-file, without blocking on the FIFO", async () => {
    const sub = join(dir, "sub");
    mkdirSync(sub, { recursive: true });
    await expect(scanFile(sub, messagesSchema)).rejects.toMatchObject({ code: "not-a-file", path: sub });
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    await expect(scanFile(fifo, messagesSchema)).rejects.toMatchObject({ code: "not-a-file" });
  });

  it("rejects an empty file", async () => {
    const path = join(dir, "empty.json");
    writeFileSync(path, "");
    await expect(scanFile(path, messagesSchema)).rejects.toMatchObject({ code: "empty", path });
  });

  it("closes its file handle on success and on every failure", async () => {
    const fds = (): number => readdirSync("/proc/self/fd").length;
    const good = join(dir, "good.json");
    writeFileSync(good, DOC);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, `${DOC.slice(0, 300)}]]]`);
    const empty = join(dir, "empty2.json");
    writeFileSync(empty, "");
    const before = fds();
    for (let i = 0; i < 20; i++) {
      await scanFile(good, messagesSchema, { chunkBytes: 16 });
      await scanFile(bad, messagesSchema, { chunkBytes: 16 }).catch((e: unknown) => e);
      await scanFile(empty, messagesSchema).catch((e: unknown) => e);
      await scanFile(dir, messagesSchema).catch((e: unknown) => e);
    }
    expect(fds()).toBeLessThanOrEqual(before);
  });

  it("validates chunkBytes", async () => {
    await expect(scanFile(join(dir, "x"), messagesSchema, { chunkBytes: 0 })).rejects.toThrow(RangeError);
  });
});
