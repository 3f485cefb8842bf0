import type { Scanned } from "../../scan/schema.ts";
import type { taskHistorySchema, uiMessagesSchema } from "./schema.ts";

export type ScannedUiMessages = Scanned<typeof uiMessagesSchema>;
export type ScannedTaskHistory = Scanned<typeof taskHistorySchema>;

/** Adapter id of the task format: the first segment of its keys, never equal to the CLI's `cline`. */
export const CLINE_TASKS_ADAPTER_ID = "cline-tasks";

/** Which Cline wrote a root, as `cline.client` says it. */
export type TaskClient = "cli" | "vscode";

/**
 * One data root of the task format: the folder holding `tasks/<taskId>/` and `state/`
 * (docs/cline-format.md §15.1).
 */
export interface TaskRoot {
  readonly path: string;
  readonly client: TaskClient;
  /** The editor or product, for people: "Cline CLI 1.x/2.x or JetBrains", "Cursor", ... */
  readonly product: string;
  /** What found it: `CLINE_DIR`, `<home>/.cline`, `--task-root`, `Linux Cursor`, ... */
  readonly foundBy: string;
}
