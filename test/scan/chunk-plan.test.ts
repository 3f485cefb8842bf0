import { describe, expect, it } from "vitest";
import { chunkPlan, DEFAULT_CHUNK_BYTES, SMALL_FILE_BYTES } from "../../src/scan/scanner.ts";

describe("chunkPlan", () => {
  it("sizes buffers to a small file and skips the wasm arena", () => {
    expect(chunkPlan(2048, DEFAULT_CHUNK_BYTES, "auto")).toEqual({ chunkBytes: 2049, skipper: "indexOf" });
  });
  it("keeps full chunks and the wasm skipper for large files", () => {
    expect(chunkPlan(SMALL_FILE_BYTES * 10, DEFAULT_CHUNK_BYTES, "auto")).toEqual({
      chunkBytes: DEFAULT_CHUNK_BYTES,
      skipper: "auto",
    });
  });
  it("honours an explicit skipper and tiny test chunks", () => {
    expect(chunkPlan(100, 3, "wasm")).toEqual({ chunkBytes: 3, skipper: "wasm" });
  });
});
