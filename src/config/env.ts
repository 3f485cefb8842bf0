/**
 * The environment reader lives in src/util/env.ts, below the adapters (which take the
 * environment as an argument and read Cline's variables with it); re-exported for config/.
 */
export { type Env, envStr } from "../util/env.ts";
