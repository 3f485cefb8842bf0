/**
 * A system tool a test needs (a Debian package that `.ci/run` installs): whether it is there. In CI
 * a missing tool fails the test file, saying what to install; elsewhere the file is skipped with a
 * warning that says the same, never silently.
 */
import { existsSync } from "node:fs";

export function systemTool(path: string, aptPackage: string, without: string): boolean {
  if (existsSync(path)) return true;
  const msg = `${path} is missing (apt-get install -y ${aptPackage}): ${without}`;
  if (process.env.CI) throw new Error(msg);
  console.warn(`\n!!! SKIPPING: ${msg}\n`);
  return false;
}
