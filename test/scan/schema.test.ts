import { describe, expect, it } from "vitest";
import {
  arr,
  isWrongType,
  num,
  obj,
  oneOf,
  type Scanned,
  str,
  WRONG,
  wrongTypeShown,
} from "../../src/scan/schema.ts";

describe("schema builders", () => {
  it("build frozen schema nodes", () => {
    expect(str()).toEqual({ kind: "string", maxBytes: 1024 });
    expect(str(7)).toEqual({ kind: "string", maxBytes: 7 });
    expect(num).toEqual({ kind: "number" });
    const o = obj({ a: num });
    expect(o).toMatchObject({ kind: "object", fields: { a: num } });
    expect(Object.keys(o)).toEqual(["kind", "fields", "compiled"]);
    expect(arr(o)).toEqual({ kind: "array", items: o });
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(o.fields)).toBe(true);
  });

  it("compile the names the scanner matches once, with the schema", () => {
    const o = obj({ id: num, é: num });
    expect(o.compiled?.names).toEqual(["id", "é"]);
    expect(o.compiled?.bytes.map((b) => Buffer.from(b).toString("utf8"))).toEqual(["id", "é"]);
    expect(o.compiled?.schemas).toEqual([num, num]);
    expect(o.compiled?.maxRaw).toBe(12); // "id" and "é" are 2 bytes; \u00XX is 6 bytes for 1
    expect(Object.isFrozen(o.compiled)).toBe(true);
    const e = oneOf(["user", "assistant"]);
    expect(e.compiled?.names).toEqual(["user", "assistant"]);
    expect(e.compiled?.schemas).toEqual([]);
  });

  it("copies fields, so mutating the input afterwards changes nothing", () => {
    const fields: Record<string, typeof num> = { a: num };
    const o = obj(fields);
    fields.b = num;
    expect(Object.keys(o.fields)).toEqual(["a"]);
  });

  it("rejects bad string limits", () => {
    expect(() => str(-1)).toThrow(RangeError);
    expect(() => str(1.5)).toThrow(RangeError);
    expect(() => str(Number.NaN)).toThrow(RangeError);
  });
});

describe("isWrongType", () => {
  it("recognizes the scanner's markers only", () => {
    for (const w of Object.values(WRONG)) expect(isWrongType(w)).toBe(true);
    // a decoded object that happens to have a `wrongType` field is data, not a marker
    expect(isWrongType({ wrongType: "string" })).toBe(false);
    expect(isWrongType(null)).toBe(false);
    expect(isWrongType("string")).toBe(false);
    expect(isWrongType([])).toBe(false);
  });

  it("markers carry only their kind and cannot be changed", () => {
    expect(Object.keys(WRONG["too-long"])).toEqual(["wrongType"]);
    expect(Object.isFrozen(WRONG.number)).toBe(true);
  });

  it("types decoded values from the schema", () => {
    const s = obj({ id: str(), n: num, xs: arr(obj({ t: str() })) });
    const v: Scanned<typeof s> = { id: "a", n: 1, xs: [{ t: "x" }, WRONG.null] };
    if (!isWrongType(v)) {
      const id: string | { wrongType: string } | undefined = v.id;
      expect(id).toBe("a");
    }
  });
});

describe("wrongTypeShown", () => {
  const table: [keyof typeof WRONG, string][] = [
    ["object", "an object"],
    ["array", "an array"],
    ["number", "a number"],
    ["null", "a null"],
    ["unlisted", "an unlisted"],
    ["too-long", "a too-long"],
  ];
  for (const [k, want] of table) it(`${k} -> ${want}`, () => expect(wrongTypeShown(WRONG[k])).toBe(want));
});
