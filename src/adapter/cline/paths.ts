import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { type Env, envStr } from "../../util/env.ts";

/**
 * Cline's own path chain (verified against cline@3.0.65, docs/cline-format.md §2.1):
 *   root     = $CLINE_DIR              or <home>/.cline
 *   data     = $CLINE_DATA_DIR         or <root>/data
 *   sessions = $CLINE_SESSION_DATA_DIR or <data>/sessions
 *   db       = $CLINE_DB_DATA_DIR      or <data>/db
 * Two traps: the `data/` level is real, and CLINE_SESSION_DATA_DIR IS the sessions
 * directory (appending "sessions" to it looks where Cline never writes).
 */
export const ENV = {
  dir: "CLINE_DIR",
  dataDir: "CLINE_DATA_DIR",
  sessionDataDir: "CLINE_SESSION_DATA_DIR",
  dbDataDir: "CLINE_DB_DATA_DIR",
} as const;

export type PathOrigin = "flag" | "env" | "default";

export interface ResolvedPath {
  readonly path: string;
  readonly origin: PathOrigin;
  /** The flag or variable that set it, or the rule that derived it. */
  readonly via: string;
}

export interface ClinePaths {
  readonly root: ResolvedPath;
  readonly data: ResolvedPath;
  readonly sessions: ResolvedPath;
  readonly db: ResolvedPath;
}

export interface ClinePathFlags {
  readonly clineDir?: string | undefined;
  readonly dataDir?: string | undefined;
  readonly sessionsDir?: string | undefined;
  readonly dbDir?: string | undefined;
}

/**
 * Resolve the four Cline directories. A flag beats the variable at its own level and
 * also the variables BELOW it (as Cline's own `--data-dir` overrides
 * CLINE_SESSION_DATA_DIR): whoever names a directory on the command line means it.
 */
export function resolveClinePaths(
  flags: ClinePathFlags,
  env: Env,
  home: string = homedir(),
  cwd: string = process.cwd(),
): ClinePaths {
  const rootFlag = flags.clineDir;
  const root: ResolvedPath =
    rootFlag !== undefined
      ? { path: resolve(cwd, rootFlag), origin: "flag", via: "--cline-dir" }
      : envStr(env, ENV.dir) !== undefined
        ? { path: resolve(cwd, envStr(env, ENV.dir) as string), origin: "env", via: ENV.dir }
        : { path: join(home, ".cline"), origin: "default", via: "<home>/.cline" };

  const data = level(
    flags.dataDir,
    "--data-dir",
    rootFlag !== undefined,
    env,
    ENV.dataDir,
    root,
    "data",
    cwd,
  );
  const aboveIsFlag = rootFlag !== undefined || flags.dataDir !== undefined;
  const sessions = level(
    flags.sessionsDir,
    "--sessions-dir",
    aboveIsFlag,
    env,
    ENV.sessionDataDir,
    data,
    "sessions",
    cwd,
  );
  const db = level(flags.dbDir, "--db-dir", aboveIsFlag, env, ENV.dbDataDir, data, "db", cwd);
  return Object.freeze({ root, data, sessions, db });
}

function level(
  flag: string | undefined,
  flagName: string,
  parentFromFlag: boolean,
  env: Env,
  envName: string,
  parent: ResolvedPath,
  child: string,
  cwd: string,
): ResolvedPath {
  if (flag !== undefined) return { path: resolve(cwd, flag), origin: "flag", via: flagName };
  const fromEnv = parentFromFlag ? undefined : envStr(env, envName);
  if (fromEnv !== undefined) return { path: resolve(cwd, fromEnv), origin: "env", via: envName };
  const rule = parent.origin === "default" ? parent.via : `<${parent.via}>`;
  return {
    path: join(parent.path, child),
    origin: parent.origin === "default" ? "default" : parent.origin,
    via: `${rule}/${child}`,
  };
}

/** True when `inner` is `outer` or below it (both absolute). */
export function isWithin(inner: string, outer: string): boolean {
  const a = resolve(inner);
  const b = resolve(outer);
  return a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`);
}
