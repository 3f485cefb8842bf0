/**
 * Commits and pull requests made by one command call that succeeded (docs/metrics.md), shared by
 * the adapters: the command lines' kinds are read from their escaped bytes (src/scan/command-kinds.ts),
 * never decoded. One record per command that makes one, keyed by the call and its index per kind.
 */
import { type CommandKind, commandKinds } from "../scan/command-kinds.ts";
import type { EscapedText } from "../scan/escaped-text.ts";
import type { DeliveryRecord, ToolCall } from "./types.ts";

/** The deliveries of `commands` (the call's command lines that succeeded, in order). */
export function deliveryRecords(call: ToolCall, commands: readonly EscapedText[]): DeliveryRecord[] {
  const out: DeliveryRecord[] = [];
  const seen: Record<CommandKind, number> = { commit: 0, pull_request: 0 };
  for (const c of commands)
    for (const kind of commandKinds(c)) {
      const n = seen[kind]++;
      out.push({
        deliveryKey: `${call.callKey}|${kind}|${n}`,
        callKey: call.callKey,
        sessionId: call.sessionId,
        agent: call.agent,
        kind,
        toolName: call.toolName,
        timestampMs: call.timestampMs,
        model: call.model,
        provider: call.provider,
        project: call.project,
        sourcePath: call.sourcePath,
        ...(call.client === undefined ? {} : { client: call.client }),
      });
    }
  return out;
}
