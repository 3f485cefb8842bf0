import { describe, expect, it } from "vitest";
import { createProgress } from "../../src/cli/progress.ts";

function fakeStream(isTTY: boolean) {
  const out: string[] = [];
  return { out, stream: { isTTY, write: (s: string) => out.push(s) } as unknown as NodeJS.WriteStream };
}

describe("createProgress", () => {
  it("draws on a TTY and ends the line", () => {
    const { out, stream } = fakeStream(true);
    const p = createProgress(stream, "collecting", 2);
    p.update(1, 4);
    p.update(4, 4);
    p.finish();
    expect(out.join("")).toContain("4/4 documents");
    expect(out.at(-1)).toBe("\n");
  });

  it("prints nothing on a pipe", () => {
    const { out, stream } = fakeStream(false);
    const p = createProgress(stream, "collecting", 0);
    p.update(1, 4);
    p.finish();
    expect(out).toEqual([]);
  });

  it("stays quiet for small collections", () => {
    const { out, stream } = fakeStream(true);
    const p = createProgress(stream, "collecting", 20);
    p.update(3, 3);
    p.finish();
    expect(out).toEqual([]);
  });

  it("an export counts series and shows its rate", () => {
    const { out, stream } = fakeStream(true);
    const p = createProgress(stream, "exporting", 20, { unit: "series" });
    p.update(1200, 4000, 351.4);
    p.finish();
    expect(out.join("")).toContain("1200/4000 series, 351 series/s");
  });
});
