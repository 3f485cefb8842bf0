/**
 * `dir` normalized as `path.join` would, with one trailing "/": a child's path is then one
 * concatenation with its name (a directory entry's name holds no "/" and is never "." or ".."),
 * instead of a `join` per child over a walk of thousands.
 */
import { join } from "node:path";

export function dirPrefix(dir: string): string {
  return join(dir, "_").slice(0, -1);
}
