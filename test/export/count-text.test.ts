import { describe, expect, it } from "vitest";
import { countText, progressLine } from "../../src/export/committing-exporter.ts";

describe("the counts of an export in pages, as logged", () => {
  it("within the count taken when the export began: 'N of T'", () => {
    expect(countText({ delivered: 1200, total: 40_000 })).toBe(
      "1,200 of 40,000 series delivered, the next export continues after them",
    );
    expect(countText({ delivered: 1200, total: undefined })).toBe(
      "1,200 series delivered, the next export continues after them",
    );
  });

  it("past it (a backfill kept committing while the export paged): never 'N of T' with N > T", () => {
    const c = { delivered: 4150, total: 2304 };
    expect(countText(c)).toBe(
      "4,150 (2,304 when the export began) series delivered, the next export continues after them",
    );
    expect(progressLine("http://x", c, 0, 2000, false)).toBe(
      "export to http://x in pages: 4,150 (2,304 when the export began) series delivered (2,075 series/s)",
    );
    expect(progressLine("http://x", { delivered: 1000, total: 2304 }, 0, 1000, false)).toContain(
      "1,000 of 2,304 series delivered",
    );
  });
});
