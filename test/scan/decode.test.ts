import { describe, expect, it } from "vitest";
import { decodeJsonString, unescapeKey } from "../../src/scan/decode.ts";
import { ScanError } from "../../src/scan/errors.ts";

function dec(raw: string | Buffer): string {
  const b = typeof raw === "string" ? Buffer.from(raw) : raw;
  return decodeJsonString(b, 0, b.length, 0, "");
}

describe("decodeJsonString", () => {
  it("decodes like JSON.parse", () => {
    for (const raw of [
      "",
      "plain",
      String.raw`\"\\\/\b\f\n\r\t`,
      String.raw`\u0041\u00e9\u4E2D`,
      String.raw`\ud83d\ude00`,
      String.raw`lone \ud800 high`,
      String.raw`lone \udc00 low`,
      String.raw`\ud800\u0041`,
      "é中😀 raw",
      String.raw`mix é\n😀\u0000`,
    ]) {
      expect(dec(raw)).toBe(JSON.parse(`"${raw}"`));
    }
  });

  it("replaces invalid UTF-8 with U+FFFD, as decoding the whole document would", () => {
    const b = Buffer.from([0x61, 0xff, 0x5c, 0x6e, 0xe2, 0x82, 0x5c, 0x74, 0xed, 0xa0, 0x80]);
    expect(dec(b)).toBe(JSON.parse(`"${b.toString("utf8")}"`));
  });

  it("rejects bad escapes and raw control characters, with the offset", () => {
    for (const [raw, at] of [
      [String.raw`ab\x`, 2],
      [String.raw`\u12`, 0],
      [String.raw`a\u12zz`, 1],
      ["a\u0001", 1],
      ["\n", 0],
    ] as const) {
      let err: unknown;
      try {
        const b = Buffer.from(raw);
        decodeJsonString(b, 0, b.length, 100, "p");
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ScanError);
      expect(err).toMatchObject({ code: "syntax", offset: 100 + at, path: "p" });
    }
  });
});

describe("unescapeKey", () => {
  function key(raw: string): Buffer {
    const src = Buffer.from(raw);
    const out = Buffer.alloc(src.length);
    return out.subarray(0, unescapeKey(src, 0, src.length, out, 0, ""));
  }
  it("produces the UTF-8 bytes of the decoded key", () => {
    for (const raw of [
      "id",
      String.raw`\u0069d`,
      String.raw`a\"b`,
      String.raw`\u00e9`,
      String.raw`\ud83d\ude00`,
      "é😀",
    ]) {
      expect(key(raw).equals(Buffer.from(JSON.parse(`"${raw}"`) as string))).toBe(true);
    }
  });
  it("writes lone surrogates as 0xFF so they never match a valid name", () => {
    expect([...key(String.raw`\ud800`)]).toEqual([0xff]);
    expect([...key(String.raw`\udc00x`)]).toEqual([0xff, 0x78]);
  });
  it("rejects bad escapes", () => {
    expect(() => key(String.raw`\q`)).toThrow(ScanError);
    expect(() => key("a\u0002")).toThrow(ScanError);
  });
});
