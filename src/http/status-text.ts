/**
 * A status code with its standard reason phrase (RFC 9110 §15), e.g. "404 Not Found", or the code alone when it has
 * none. The standard phrase, never the server's: what a server sends stays out of messages.
 */
export function withReason(status: number): string {
  // node:http is loaded for its table only when a status is put into words: a walk itself never needs it.
  const reason = process.getBuiltinModule('node:http').STATUS_CODES[status];
  return reason ? `${status} ${reason}` : String(status);
}
