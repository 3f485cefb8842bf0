/** The process environment, or a test's stand-in for it. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A variable's value, trimmed; empty or blank is unset. The one reading of an environment
 * variable in this codebase (the OTel spec's variables, ours, and Cline's path variables, where an
 * empty value is unset too, as in Cline's `a || b`). Trimming is deliberate: a stray space pasted
 * into a unit file must not become part of a path or a number.
 */
export function envStr(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? undefined : v;
}
