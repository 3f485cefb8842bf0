/**
 * Identity keys. Message ids are minted locally by Cline (`msg_<8>`), unique only
 * within one message stream, so every key is scoped by session and agent. Components
 * are escaped so that no choice of ids can make two different tuples spell the same
 * key: a collision is unrepresentable, not merely improbable.
 */
/**
 * One component of a `|`-separated key, escaped (`%` then `|`): the one escaping of every key
 * of the Cline surfaces (messages, tool calls, turns, captures).
 */
export function keyPart(s: string): string {
  // Most components (ids, agents, times) need no escaping: returned as they are, no regex run.
  if (!s.includes("%") && !s.includes("|")) return s;
  return s.replace(/%/g, "%25").replace(/\|/g, "%7C");
}

/** `cline|<session id>|<agent>|<message id>` */
export function usageDedupKey(sessionId: string, agent: string, messageId: string): string {
  return `cline|${keyPart(sessionId)}|${keyPart(agent)}|${keyPart(messageId)}`;
}

/** `cline|<session id>|<agent>|<tool_use id>` */
export function toolCallKey(sessionId: string, agent: string, toolUseId: string): string {
  return `cline|${keyPart(sessionId)}|${keyPart(agent)}|${keyPart(toolUseId)}`;
}

/** `cline|<session id>|<agent>|turn|<prompt message id>`: five parts, never equal to a four-part key. */
export function turnKey(sessionId: string, agent: string, turnId: string): string {
  return `cline|${keyPart(sessionId)}|${keyPart(agent)}|turn|${keyPart(turnId)}`;
}

/** `cline|<session id>|<agent>|active`: the lead's timeline (ActiveTimeline.streamKey). */
export function activeStreamKey(sessionId: string, agent: string): string {
  return `cline|${keyPart(sessionId)}|${keyPart(agent)}|active`;
}

/** `cline|<session id>|<agent>|session|new`: the session's start (CLI 3.x cannot tell a resume). */
export function sessionStartKey(sessionId: string, agent: string): string {
  return `cline|${keyPart(sessionId)}|${keyPart(agent)}|session|new`;
}
