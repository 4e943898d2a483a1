/**
 * Shape checks of values that arrive untyped (parsed JSON, thrown errors), in one place, so that callers narrow
 * through these guards instead of casting.
 */

export type JsonObject = Record<string, unknown>;

/** A JSON object: neither null nor an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `code` of a system or library error (`ENOENT`, `UND_ERR_SOCKET`), when it carries one. */
export function errCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** A failure in a word or a line: its code, else the first line of its message. */
export function errReason(err: unknown): string {
  const code = errCode(err);
  if (code !== undefined) return code;
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] || 'unknown error';
}
