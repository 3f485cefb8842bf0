/** `choiceListParser` (src/cli/choice-list.ts): words, comma lists or both; every name checked. */
import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { choiceListParser } from "../../src/cli/choice-list.ts";

const parse = choiceListParser(["day", "model", "client"] as const, "report dimension");

describe("a choice list option", () => {
  it("splits at commas, trims, accumulates over words and never changes the previous array", () => {
    const def: ("day" | "model" | "client")[] = [];
    const a = parse("client,model", def);
    expect(a).toEqual(["client", "model"]);
    expect(def).toEqual([]);
    expect(parse(" day , model,", a)).toEqual(["client", "model", "day", "model"]);
    expect(parse("day", undefined)).toEqual(["day"]);
  });

  it("names every bad name, and refuses an empty list", () => {
    expect(() => parse("client,modl", [])).toThrow(InvalidArgumentError);
    expect(() => parse("client,modl", [])).toThrow(
      /^'modl' is not a report dimension; choose from day, model, client/,
    );
    expect(() => parse("x,client,y", [])).toThrow(/^'x', 'y' are not report dimensions;/);
    expect(() => parse(" , ", [])).toThrow(/no report dimension given/);
  });
});
