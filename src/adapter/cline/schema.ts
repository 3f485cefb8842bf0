import { arr, bool, num, obj, str } from "../../scan/schema.ts";

/**
 * The allow-list: the ONLY fields of a Cline document this process ever decodes.
 * Everything else (message text, thinking, tool inputs, tool results, the system
 * prompt, metadata) is skipped as bytes by the scanner and never becomes a string.
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
      // tool_use: id, name. tool_result: tool_use_id, is_error; never its content.
      content: arr(
        obj({ type: str(64), id: str(512), name: str(512), tool_use_id: str(512), is_error: bool }),
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
