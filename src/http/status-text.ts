/** "404 Not Found" (RFC 9110 §15): the standard phrase, never the server's, which stays out of messages. */
export function withReason(status: number): string {
  // node:http is loaded for its table only when a status is put into words: a walk itself never needs it.
  const reason = process.getBuiltinModule('node:http').STATUS_CODES[status];
  return reason ? `${status} ${reason}` : String(status);
}
