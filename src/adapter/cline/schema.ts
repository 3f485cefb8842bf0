import { arr, bool, embedded, num, obj, oneOf, raw, shape, str } from "../../scan/schema.ts";

/** A path's raw bytes: only its extension is ever decoded (src/scan's extensionOf). */
const PATH_MAX_BYTES = 16 * 1024;
/** An edit's texts and a patch: a larger one is `too-long` and counted as inexact, never guessed. */
export const EDIT_TEXT_MAX_BYTES = 64 * 1024 * 1024;
/** An error text: matched against fixed phrases (outcome.ts); a longer one still says "an error". */
const ERROR_MAX_BYTES = 4096;
/** Enough of a result text for the fixed phrase it starts with ("File created successfully"). */
const RESULT_PREFIX_BYTES = 64;
/** No error text is this: an `error` string decodes to `unlisted`, saying only that it is there. */
const PRESENT_ONLY = "\u0000cline-otel: present";
/** A command line: read as bytes for commits and pull requests (src/scan/command-kinds.ts); longer is not read. */
export const COMMAND_MAX_BYTES = 64 * 1024;

/**
 * A tool result's JSON, `{query, result, success}` or `{query, result: "", error}` (docs/cline-format.md
 * §16). Stored as a JSON string (editor, apply_patch, a refused or denied call): `success`, and of
 * `error` and `result` only raw bytes for fixed phrases (a denial's words, "File created
 * successfully"); never `query`.
 */
const toolResultJson = obj({
  success: bool,
  error: raw(ERROR_MAX_BYTES),
  result: raw(RESULT_PREFIX_BYTES, { prefix: true }),
});

/**
 * The same JSON stored as an array of objects (run_commands, read_files, ...): only `success` and
 * whether an `error` is there. An enum with no real value tells a present string without copying a
 * byte of it (`{wrongType:"unlisted"}`): command output and file text are not even copied.
 */
const toolResultItem = obj({ success: bool, error: oneOf([PRESENT_ONLY]) });

/**
 * The allow-list: the ONLY fields of a Cline document this process ever decodes.
 * Everything else (message text, thinking, tool inputs, tool results, the system
 * prompt, metadata) is skipped as bytes by the scanner and never becomes a string; the `raw`
 * fields (an edit's texts, a path, an error text) are handed out as bytes, never decoded.
 * Every message's `ts` is decoded (user messages too: the timing of chat and tool spans).
 */
export const messagesDocumentSchema = obj({
  version: num,
  sessionId: str(512),
  agent: str(64),
  messages: arr(
    obj({
      id: str(512),
      role: str(32),
      ts: num,
      modelInfo: obj({ id: str(512), provider: str(256) }),
      metrics: obj({
        inputTokens: num,
        outputTokens: num,
        cacheReadTokens: num,
        cacheWriteTokens: num,
        cost: num,
      }),
      // tool_use: id, name, and of an edit's input (editor, apply_patch) and of run_commands' command
      // lines only raw bytes and the insert line. tool_result: tool_use_id, is_error, and its JSON as toolResultJson says
      // (an array of them for most tools, a JSON string holding one for others).
      content: arr(
        obj({
          type: str(64),
          id: str(512),
          name: str(512),
          tool_use_id: str(512),
          is_error: bool,
          input: obj({
            path: raw(PATH_MAX_BYTES),
            old_text: raw(EDIT_TEXT_MAX_BYTES),
            new_text: raw(EDIT_TEXT_MAX_BYTES),
            insert_line: num,
            input: raw(EDIT_TEXT_MAX_BYTES),
            // run_commands: one command line or an array of them, as bytes (never decoded).
            commands: shape({ string: raw(COMMAND_MAX_BYTES), array: arr(raw(COMMAND_MAX_BYTES)) }),
          }),
          content: shape({ string: embedded(toolResultJson), array: arr(toolResultItem) }),
        }),
      ),
    }),
  ),
});

/**
 * The root session's sidecar `<id>/<id>.json`: only its cwd (the project) and source (the client)
 * are read; never `prompt` or `metadata`.
 */
export const sidecarSchema = obj({
  session_id: str(512),
  cwd: str(8192),
  source: str(256),
});
