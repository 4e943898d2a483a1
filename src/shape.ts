/**
 * Shape checks of values that arrive untyped (parsed JSON, thrown errors), in one place, so that callers narrow
 * through these guards instead of casting.
 */

export type JsonObject = Record<string, unknown>;

/** A JSON object: neither null nor an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Narrows `value` to a string, else throws the caller's own error for `what` (a field's or a setting's name). */
export function assertString(value: unknown, what: string, fail: (what: string) => Error): asserts value is string {
  if (typeof value !== 'string') throw fail(what);
}

/** The `code` of a system or library error (`ENOENT`, `UND_ERR_SOCKET`), when it carries one. */
export function errCode(err: unknown): string | undefined {
  // An IdcliError's `code` (it has an `exitCode` too) is idcli's own word for the failure, not a system's.
  if (typeof err !== 'object' || err === null || 'exitCode' in err) return undefined;
  const code = 'code' in err ? err.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** What was thrown, as text: an Error's message, anything else as String() gives it. */
export function errMessage(err: unknown): string {
  return withoutRuntimeHint(err instanceof Error ? err.message : String(err));
}

/**
 * Node 23.8+ ends some certificate messages with advice to restart it with --use-system-ca: a flag the single
 * executable's user cannot pass, and one idcli does not need, as it reads the system's store itself.
 */
export function withoutRuntimeHint(message: string): string {
  return message.replace(
    /;?\s*if the root CA is installed locally, try running Node\.js with --use-system-ca\.?/gi,
    '',
  );
}

/** A failure in a word or a line: its code, else the first line of its message. */
export function errReason(err: unknown): string {
  return errCode(err) ?? (errMessage(err).split('\n')[0] || 'unknown error');
}
