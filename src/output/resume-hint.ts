/** Single-quotes a word for POSIX shells: the only character needing care inside '...' is ' itself. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The line telling the user what made it to stdout and how to get the rest. The resume URL is the first
 * page NOT written, so running the command yields exactly the remaining items. URLs here come from the
 * API's own links (cursors are not secrets; tokens never travel in URLs).
 */
export function stoppedMessage(itemsWritten: number, resumeUrl: string | undefined): string {
  const items = `${itemsWritten} ${itemsWritten === 1 ? 'item' : 'items'}`;
  if (resumeUrl === undefined) return `idcli: stopped after ${items}\n`;
  return `idcli: stopped after ${items}; resume with: idcli list ${shellQuote(resumeUrl)}\n`;
}
