/**
 * A scope of listings stored as one entry (src/adapter/packed-listings.ts): what is put comes back
 * in a new process, a flush writes one row, and rows stored one per path by the version before are
 * read and folded into the entry.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ListingStore, listingMemo, type StoredListing } from "../../src/adapter/listings.ts";
import {
  PACKED_KEY,
  PACKED_MARK,
  packedListingMemo,
  packListings,
  unpackListings,
} from "../../src/adapter/packed-listings.ts";
import { Ledger } from "../../src/ledger/ledger.ts";

const L = (mark: string, takenMs: number, entries: string): StoredListing => ({ mark, takenMs, entries });

let dir: string;
let ledger: Ledger;
let store: ListingStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "packed-listings-"));
  ledger = Ledger.open(join(dir, "state"));
  store = ledger.listings as ListingStore;
});
afterEach(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("packedListingMemo", () => {
  it("keeps every listing in one row, as a new process sees it", () => {
    const m = packedListingMemo("s", store);
    m.put("/a", L("1:2:3:4", 10, "fa.messages.json"));
    m.put("/b", L("1:5:3:4", 11, ""));
    m.put("/c", L("1:6:3:4", 12, "dx/lz"));
    m.drop("/c");
    expect(m.pending()).toBe(3);
    expect(m.flush()).toBe(3);
    expect(m.pending()).toBe(0);
    expect(m.flush()).toBe(0);
    const rows = store.load("s");
    expect([...rows.keys()]).toEqual([PACKED_KEY]);
    expect(rows.get(PACKED_KEY)?.mark).toBe(PACKED_MARK);
    const again = packedListingMemo("s", store);
    expect([...again.paths()].sort()).toEqual(["/a", "/b"]);
    expect(again.get("/a")).toEqual(L("1:2:3:4", 10, "fa.messages.json"));
    expect(again.get("/b")).toEqual(L("1:5:3:4", 11, ""));
    expect(again.get("/c")).toBeUndefined();
    // A drop of what is not there changes nothing.
    again.drop("/nowhere");
    expect(again.pending()).toBe(0);
  });

  it("folds the rows an older version stored one per path into the entry, and drops them", () => {
    // The version before: one row per directory (listingMemo), e.g. the ledger of an earlier run.
    const old = listingMemo("s", store);
    old.put("/a", L("1:2:3:4", 10, "fa.messages.json"));
    old.put("/b", L("1:5:3:4", 11, "fb.messages.json"));
    old.flush();
    // A packed entry holding an older listing of /b, and one of /z.
    store.save(
      "s",
      new Map([
        [
          PACKED_KEY,
          L(
            PACKED_MARK,
            1,
            packListings(
              new Map([
                ["/b", L("1:5:3:1", 5, "")],
                ["/z", L("1:9:9:9", 7, "fz.messages.json")],
              ]),
            ),
          ),
        ],
      ]),
      [],
    );
    const m = packedListingMemo("s", store);
    expect(m.get("/a")?.entries).toBe("fa.messages.json");
    expect(m.get("/b")).toEqual(L("1:5:3:4", 11, "fb.messages.json")); // the later one
    expect(m.get("/z")?.entries).toBe("fz.messages.json");
    expect(m.pending()).toBe(2);
    m.flush();
    expect([...store.load("s").keys()]).toEqual([PACKED_KEY]);
    const again = packedListingMemo("s", store);
    expect([...again.paths()].sort()).toEqual(["/a", "/b", "/z"]);
    expect(again.pending()).toBe(0);
  });

  it("a damaged or foreign entry is no listing (listed again), never a wrong one", () => {
    for (const entries of ["", "{", "{}", '[["/a","m",1]]', '[["/a","m","1",""]]', '[[1,"m",1,""]]']) {
      expect(unpackListings(entries), entries).toBeUndefined();
      store.save("d", new Map([[PACKED_KEY, L(PACKED_MARK, 1, entries)]]), []);
      expect([...packedListingMemo("d", store).paths()], entries).toEqual([]);
    }
    store.save("d", new Map([[PACKED_KEY, L("packed:0", 1, '[["/a","m",1,""]]')]]), []);
    expect([...packedListingMemo("d", store).paths()]).toEqual([]);
    expect(unpackListings('[["/a","m",1,""]]')?.get("/a")).toEqual(L("m", 1, ""));
  });

  it("a failed save keeps what changed, written by the next flush", () => {
    let fail = true;
    const flaky: ListingStore = {
      load: (scope) => store.load(scope),
      save: (scope, put, drop) => {
        if (fail) throw new Error("database is locked");
        store.save(scope, put, drop);
      },
    };
    const m = packedListingMemo("s", flaky);
    m.put("/a", L("1:2:3:4", 10, ""));
    expect(() => m.flush()).toThrow("database is locked");
    expect(m.pending()).toBe(1);
    fail = false;
    expect(m.flush()).toBe(1);
    expect(packedListingMemo("s", store).get("/a")).toEqual(L("1:2:3:4", 10, ""));
  });
});
