import { arr, bool, embedded, num, obj, oneOf, phrases, raw, str } from "../../scan/schema.ts";
import { ANSWER_NEAR, ANSWER_PHRASES } from "./answers.ts";

/**
 * The longest edit text or path copied for counting (docs/cline-format.md §15.14), in the message
 * text's raw bytes (the content escaped twice): a longer one is not counted (its record says
 * inexact). Cline's own editor refuses far smaller files.
 */
export const MAX_EDIT_BYTES = 32 * 1024 * 1024;
export const MAX_PATH_BYTES = 16 * 1024;
/**
 * The longest command line (`say: "command"` / `ask: "command"` text) read for commits and pull
 * requests, as bytes; a longer one is not read. No other text is copied (`rawFallbackIf`).
 */
export const MAX_COMMAND_BYTES = 16 * 1024;

/**
 * The tool names of `say: "tool"` (the legacy core's ClineSayTool, docs/cline-format.md §15.4):
 * matched as bytes, so a name outside the list is `unlisted` and nothing of the tool JSON (paths,
 * file contents, diffs) ever becomes a string.
 */
export const SAY_TOOL_NAMES = [
  "editedExistingFile",
  "newFileCreated",
  "fileDeleted",
  "readFile",
  "listFilesTopLevel",
  "listFilesRecursive",
  "listCodeDefinitionNames",
  "searchFiles",
  "webFetch",
  "webSearch",
  "summarizeTask",
  "useSkill",
] as const;

/**
 * What a message's `text` may hold that is read: the numbers of an `api_req_started` entry, where
 * its `request` text holds the phrases that answer the calls before it (answers.ts), the name of
 * a tool entry, and an edit's `path` and `content` as escaped bytes for counting (edits.ts). The
 * text is a JSON string inside the JSON document; it is scanned as one (src/scan/embedded.ts):
 * the request, command lines and prose are crossed as bytes.
 */
const textSchema = obj({
  request: phrases(ANSWER_PHRASES, ANSWER_NEAR),
  // As the outer text's raw bytes (depth 2): crossed like the request, never unescaped or copied twice.
  path: raw(MAX_PATH_BYTES, { outer: true }),
  content: raw(MAX_EDIT_BYTES, { outer: true }),
  tokensIn: num,
  tokensOut: num,
  cacheReads: num,
  cacheWrites: num,
  cost: num,
  tool: oneOf(SAY_TOOL_NAMES),
  cancelReason: oneOf(["streaming_failed", "user_cancelled"]),
});

/** `tasks/<taskId>/ui_messages.json`: the ONLY fields of it this process decodes. */
export const uiMessagesSchema = arr(
  obj({
    ts: num,
    type: oneOf(["say", "ask"]),
    say: str(64),
    ask: str(64),
    // JSON for requests and tools; a command line's raw bytes for commands (never decoded): copied
    // only after a `say`/`ask` of "command" (written before `text`), never for prose.
    text: embedded(textSchema, {
      rawFallback: MAX_COMMAND_BYTES,
      rawFallbackIf: { say: ["command"], ask: ["command"] },
    }),
    modelInfo: obj({ providerId: str(128), modelId: str(512), mode: str(32) }),
    partial: bool,
  }),
);

/**
 * `state/taskHistory.json`: per task its id and lifetime totals, read only to check the
 * per-request sums (never added); never `task` (the prompt) or any other field.
 */
export const taskHistorySchema = arr(
  obj({
    id: str(128),
    tokensIn: num,
    tokensOut: num,
    cacheReads: num,
    cacheWrites: num,
    totalCost: num,
    cwdOnTaskInitialization: str(8192),
  }),
);

/**
 * `tasks/<taskId>/task_metadata.json`: per host the task ran on, when and the host's name
 * (docs/cline-format.md §15.10); never `files_in_context` (paths), `model_usage` or anything else.
 */
export const taskMetadataSchema = obj({
  environment_history: arr(obj({ ts: num, host_name: str(128) })),
});
