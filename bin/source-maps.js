// Stack traces that name src/*.ts: frames in the bundle (dist/) are mapped back through its source
// maps, lazily, when a stack is formatted (an unexpected error's report). Node's own
// `--enable-source-maps` does the same but reads and parses every loaded module's map at start-up
// (+16 ms for `paths`, ~50 %); this costs nothing until a stack is shown. Skipped when Node's own
// support is on (NODE_OPTIONS=--enable-source-maps).
import { readFileSync } from "node:fs";
import module from "node:module";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Maps the frames of files under `distUrl` (a file: URL ending in "/") when stacks are formatted. */
export function installSourceMappedStacks(distUrl) {
  if (process.sourceMapsEnabled) return;
  // Node's default formatter (Node >= 21 exposes it here) still writes the first line.
  const previous = Error.prepareStackTrace;
  /** Parsed maps by file; null when a file has none (or it is unreadable: the frame stays as it is). */
  const maps = new Map();
  const mapOf = (file) => {
    let map = maps.get(file);
    if (map === undefined) {
      try {
        map = new module.SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")));
      } catch {
        map = null; // no map (a facade chunk), or not ours to read: keep the bundle's location
      }
      maps.set(file, map);
    }
    return map;
  };
  const frame = (site) => {
    const text = site.toString();
    const url = site.getFileName();
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    if (typeof url !== "string" || !url.startsWith(distUrl) || line === null || column === null) return text;
    const file = fileURLToPath(url);
    const origin = mapOf(file)?.findOrigin(line, column);
    if (origin === undefined || !("fileName" in origin)) return text;
    // The map's sources are relative to the map (../../src/cli/paths.ts).
    const name = origin.fileName;
    const source = name.startsWith("file:")
      ? fileURLToPath(name)
      : isAbsolute(name)
        ? name
        : resolve(dirname(file), name);
    return text.replace(`${url}:${line}:${column}`, `${source}:${origin.lineNumber}:${origin.columnNumber}`);
  };
  Error.prepareStackTrace = (error, sites) => {
    const head = typeof previous === "function" ? previous(error, []) : Error.prototype.toString.call(error);
    return [head, ...sites.map((s) => `    at ${frame(s)}`)].join("\n");
  };
}
