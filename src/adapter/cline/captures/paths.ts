import { isAbsolute, join, resolve } from "node:path";
import type { ClinePaths, ResolvedPath } from "../paths.ts";

/**
 * Where Cline writes provider-request captures (SCHEMA.md 7.1, cline@3.0.65):
 *   $CLINE_CAPTURE_DIR, else $CLINE_DATA_DIR/provider-request-captures ONLY when that variable
 *   is set (with neither, Cline writes nothing, even though its data dir defaults to ~/.cline/data).
 * `--data-dir X` makes Cline set CLINE_DATA_DIR=X itself, so such captures land in
 * X/provider-request-captures, a place our environment cannot see: hence the resolved data dir
 * is looked at too. Our own flag / variable names a directory Cline was pointed at elsewhere.
 */
export const CAPTURE_ENV = {
  captureDir: "CLINE_CAPTURE_DIR",
  dataDir: "CLINE_DATA_DIR",
  /** Ours: a capture dir Cline was given through an environment we do not share. */
  otelCaptureDir: "CLINE_OTEL_CAPTURE_DIR",
} as const;

export const CAPTURE_SUBDIR = "provider-request-captures";
export const CAPTURE_SUFFIX = ".provider-request.json";

type Env = Readonly<Record<string, string | undefined>>;

export interface CaptureDirFlags {
  /** `--capture-dir`. */
  readonly captureDir?: string | undefined;
}

/** An empty variable is unset, as in Cline (`a || b`). */
function envValue(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === "" ? undefined : v;
}

function abs(p: string, cwd: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/**
 * Every directory that may hold capture files, in this order, duplicates (same path) removed:
 *   1. `--capture-dir`, else $CLINE_OTEL_CAPTURE_DIR (ours);
 *   2. Cline's own rule: $CLINE_CAPTURE_DIR, else $CLINE_DATA_DIR/provider-request-captures;
 *   3. <resolved data dir>/provider-request-captures (`--data-dir` users).
 * None of them needs to exist; discovery looks at the ones that do (symlinks collapsed there).
 */
export function resolveCaptureDirs(
  flags: CaptureDirFlags,
  env: Env,
  cline: Pick<ClinePaths, "data">,
  cwd: string = process.cwd(),
): ResolvedPath[] {
  const out: ResolvedPath[] = [];
  const add = (p: ResolvedPath): void => {
    if (!out.some((q) => q.path === p.path)) out.push(Object.freeze(p));
  };
  const ours = envValue(env, CAPTURE_ENV.otelCaptureDir);
  if (flags.captureDir !== undefined) {
    add({ path: abs(flags.captureDir, cwd), origin: "flag", via: "--capture-dir" });
  } else if (ours !== undefined) {
    add({ path: abs(ours, cwd), origin: "env", via: CAPTURE_ENV.otelCaptureDir });
  }
  const clineCapture = envValue(env, CAPTURE_ENV.captureDir);
  const clineData = envValue(env, CAPTURE_ENV.dataDir);
  if (clineCapture !== undefined) {
    add({ path: abs(clineCapture, cwd), origin: "env", via: CAPTURE_ENV.captureDir });
  } else if (clineData !== undefined) {
    add({
      path: join(abs(clineData, cwd), CAPTURE_SUBDIR),
      origin: "env",
      via: `<${CAPTURE_ENV.dataDir}>/${CAPTURE_SUBDIR}`,
    });
  }
  const data = cline.data;
  const rule = data.origin === "default" ? data.via : `<${data.via}>`;
  add({ path: join(data.path, CAPTURE_SUBDIR), origin: data.origin, via: `${rule}/${CAPTURE_SUBDIR}` });
  return out;
}

export interface CaptureFileName {
  readonly captureId: string;
  readonly stage: string;
  /** Cline's per-process counter per (captureId, stage). */
  readonly seq: number;
}

/** `<captureId>.<stage>.<n>.provider-request.json`; the captureId may itself contain dots. */
const NAME = /^(.+)\.([a-z][a-z0-9_]{0,63})\.([1-9][0-9]{0,14})$/;

/**
 * Parses a capture file name, or undefined for anything else: the `*.tmp` files Cline renames
 * into place, other files, names whose parts are not what Cline writes.
 */
export function parseCaptureFileName(name: string): CaptureFileName | undefined {
  if (!name.endsWith(CAPTURE_SUFFIX)) return undefined;
  const m = NAME.exec(name.slice(0, -CAPTURE_SUFFIX.length));
  if (m === null) return undefined;
  const seq = Number(m[3]);
  if (!Number.isSafeInteger(seq)) return undefined;
  return { captureId: m[1] as string, stage: m[2] as string, seq };
}

function part(s: string): string {
  return s.replace(/%/g, "%25").replace(/\|/g, "%7C");
}

/** `cline-capture|<captureId>|<stage>|<n>`, escaped so no two names spell the same key. */
export function captureDedupKey(name: CaptureFileName): string {
  return `cline-capture|${part(name.captureId)}|${part(name.stage)}|${name.seq}`;
}
