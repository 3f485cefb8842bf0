/**
 * task_metadata.json where no in-place write can explain the failure (a directory, a symlink loop,
 * a whole document that is not an object): reported `task-metadata-unreadable` at once and read
 * with the root's client, never retried as torn (a symlink loop has no stat: as torn it would
 * fail the task's every read).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import { metadataScanFailure, readTaskHosts } from "../../../src/adapter/cline-tasks/metadata.ts";
import { ScanError } from "../../../src/scan/scanner.ts";
import { counts, ROOT, request, say, writeTask } from "./helpers.ts";

describe("metadataScanFailure", () => {
  const table: [ScanError, string][] = [
    [new ScanError("truncated", 10, "/m", "input ended inside the document"), "torn"],
    [new ScanError("syntax", 3, "/m", "bad literal"), "torn"],
    [new ScanError("empty", 0, "/m", "file is empty"), "torn"],
    [new ScanError("io", 0, "/m", "ENOENT: no such file"), "absent"],
    [new ScanError("io", 0, "/m", "EACCES: permission denied"), "torn"],
    [new ScanError("io", 0, "/m", "ELOOP: too many symbolic links encountered"), "unreadable"],
    [new ScanError("not-a-file", 0, "/m", "not a regular file"), "unreadable"],
  ];
  for (const [e, want] of table)
    it(`${e.message} -> ${want}`, () => expect(metadataScanFailure(e)).toBe(want));
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cline-tasks-meta-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const BAD: [string, (path: string) => void, RegExp][] = [
  ["a directory", (p) => mkdirSync(p), /not a regular file/],
  [
    "a symlink loop",
    (p) => {
      symlinkSync(`${p}.b`, p);
      symlinkSync(p, `${p}.b`);
    },
    /ELOOP/,
  ],
  ["an array", (p) => writeFileSync(p, "[]"), /top-level value is an array, not an object/],
  ["null", (p) => writeFileSync(p, "null"), /top-level value is a null, not an object/],
];

describe("readTaskHosts", () => {
  for (const [name, make, detail] of BAD)
    it(`${name} is unreadable`, async () => {
      const task = join(dir, "t");
      mkdirSync(task);
      make(join(task, "task_metadata.json"));
      const m = await readTaskHosts(task);
      expect(m.status).toBe("unreadable");
      expect(m.status === "unreadable" && m.detail).toMatch(detail);
    });
});

describe("the adapter on such a task_metadata.json", () => {
  for (const [name, make] of BAD)
    it(`${name}: read on the first pass with the root's client, reported`, async () => {
      const data = join(dir, "data");
      writeTask(data, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
      make(join(data, "tasks", "1", "task_metadata.json"));
      const adapter = createClineTasksAdapter([{ ...ROOT, path: data }]);
      const [s] = (await adapter.discover()).sources;
      if (s === undefined) throw new Error("no source");
      for (let pass = 0; pass < 2; pass++) {
        const obs = await adapter.collectIncremental(s, undefined);
        expect(obs.status).toBe("read");
        expect(obs.status === "read" && obs.problems.map((p) => p.code)).toContain(
          "task-metadata-unreadable",
        );
        expect(obs.status === "read" && obs.events.map((e) => e.client)).toEqual(["cli"]);
      }
    });
});
