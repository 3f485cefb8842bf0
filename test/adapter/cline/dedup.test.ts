import { describe, expect, it } from "vitest";
import { toolCallKey, usageDedupKey } from "../../../src/adapter/cline/dedup.ts";

describe("usageDedupKey", () => {
  it("is cline|<session>|<agent>|<message id>", () => {
    expect(usageDedupKey("1796018194209_nfmy0", "lead", "msg_BZEHy5S0")).toBe(
      "cline|1796018194209_nfmy0|lead|msg_BZEHy5S0",
    );
  });

  it("scopes a locally minted id by session and agent", () => {
    const keys = new Set([
      usageDedupKey("s1", "lead", "msg_1"),
      usageDedupKey("s2", "lead", "msg_1"),
      usageDedupKey("s1", "subagent", "msg_1"),
    ]);
    expect(keys.size).toBe(3);
  });

  it("cannot be forged by ids containing the separator", () => {
    expect(usageDedupKey("a|b", "c", "d")).not.toBe(usageDedupKey("a", "b|c", "d"));
    expect(usageDedupKey("a%7Cb", "c", "d")).not.toBe(usageDedupKey("a|b", "c", "d"));
  });

  it("tool call keys use the tool_use id", () => {
    expect(toolCallKey("s", "lead", "toolu_1")).toBe("cline|s|lead|toolu_1");
  });
});
