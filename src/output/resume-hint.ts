import { clip, MAX_ECHO, printable } from '../printable.js';
import { redactSecrets } from '../redact.js';

/** Single-quotes a word for POSIX shells: the only character needing care inside '...' is ' itself. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The line telling the user what made it to stdout and how to get the rest. The resume URL is the first
 * page NOT written whole, so running the command, less the `skip` items of that page that were written,
 * yields exactly the remaining items. URLs here come from the API's own links: cursors are not secrets, but a
 * parameter that `--verbose` redacts (an `access_token` a server put in its links) is redacted here too, for the
 * user to fill in again.
 */
export function stoppedMessage(itemsWritten: number, nextUrl: string | undefined, skip = 0): string {
  const items = `${itemsWritten} ${itemsWritten === 1 ? 'item' : 'items'}`;
  if (nextUrl === undefined) return `idcli: stopped after ${items}\n`;
  const resumeUrl = redactSecrets(nextUrl);
  if (resumeUrl.length <= MAX_ECHO) {
    const tail = skip > 0 ? ` | tail -n +${skip + 1}` : '';
    return `idcli: stopped after ${items}; resume with: idcli list ${shellQuote(resumeUrl)}${tail}\n`;
  }
  const where = printable(whereToResume(resumeUrl));
  const after = skip > 0 ? `, after its first ${skip} ${skip === 1 ? 'item' : 'items'}` : '';
  return `idcli: stopped after ${items}; the resume URL is too long to show (${resumeUrl.length} characters); ${where}${after}\n`;
}

/**
 * A resume URL too long to echo (a server's link can be megabytes), told by what selects its page: the page index
 * of an offset collection, else the cursor-bearing query, cut.
 */
function whereToResume(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `it starts ${clip(url)}`;
  }
  const index = u.searchParams.get('pageIndex');
  if (index !== null && /^\d{1,15}$/.test(index)) return `it continues at pageIndex ${index}`;
  return u.search === '' ? `it starts ${clip(url)}` : `its query, cut: ${clip(u.search)}`;
}

/** The stop line of `list -o FILE`: the state beside FILE holds the position, so the same command continues. */
export function stoppedDumpMessage(itemsInFile: number, file: string): string {
  const items = `${itemsInFile} ${itemsInFile === 1 ? 'item' : 'items'}`;
  return `idcli: stopped after ${items} in ${printable(file)}; run the same command again to continue\n`;
}
