import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dirPrefix } from "../../src/util/dir-prefix.ts";

describe("dirPrefix", () => {
  it("is the dir normalized as join would, with one trailing slash", () => {
    expect(dirPrefix("/a/b")).toBe("/a/b/");
    expect(dirPrefix("/a/b/")).toBe("/a/b/");
    expect(dirPrefix("/a/./c/../b//")).toBe("/a/b/");
    expect(dirPrefix("/")).toBe("/");
    expect(dirPrefix("rel/dir")).toBe("rel/dir/");
  });

  it("makes the same child path as join for any entry name", () => {
    for (const dir of ["/x/y", "/x/y/", "/x/../y", "/", "a/b"])
      for (const name of ["f.messages.json", "1779366455330_gh8v8", ".hidden", "..x"])
        expect(dirPrefix(dir) + name).toBe(join(dir, name));
  });
});
