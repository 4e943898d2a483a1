import { clip, MAX_ECHO, printable } from '../printable.js';
import { isSecretParam, paramName, redactSecrets } from '../redact.js';
import { shellQuote } from '../shell-quote.js';
import { itemCount } from './human.js';

/**
 * The resume URL is the first page not written whole, so it, less `skip` items, gives exactly the rest. Secrets are
 * redacted as in `--verbose` (the hint may land in a CI log), and a second line says what `[redacted]` stands for.
 */
export function stoppedMessage(
  itemsWritten: number,
  nextUrl: string | undefined,
  skip = 0,
  redact: (text: string) => string = (text) => text,
): string {
  const items = itemCount(itemsWritten);
  if (nextUrl === undefined) return `idcli: stopped after ${items}\n`;
  const byName = redactSecrets(nextUrl);
  const resumeUrl = redact(byName);
  const note = redactedNote(nextUrl, resumeUrl !== byName);
  if (resumeUrl.length <= MAX_ECHO) {
    const tail = skip > 0 ? ` | tail -n +${skip + 1}` : '';
    return `idcli: stopped after ${items}; resume with: idcli list ${shellQuote(resumeUrl)}${tail}\n${note}`;
  }
  const where = printable(whereToResume(resumeUrl));
  const after = skip > 0 ? `, after its first ${itemCount(skip)}` : '';
  return `idcli: stopped after ${items}; the resume URL is too long to show (${resumeUrl.length} characters); ${where}${after}\n${note}`;
}

/** The line that says what `[redacted]` in the resume URL stands for, or '' when nothing was. */
function redactedNote(url: string, heldToken: boolean): string {
  // Not a URL: redactSecrets showed none of it.
  const query = URL.canParse(url) ? new URL(url).search.slice(1) : '';
  const names = new Set(
    query
      .split('&')
      .filter((part) => part.includes('=') && isSecretParam(paramName(part)))
      .map((part) => clip(printable(paramName(part)), 40)),
  );
  const what = [...names].map((name) => `the value of ${name}`);
  if (heldToken) what.push('the access token (`idcli token` prints it)');
  if (what.length === 0) return '';
  return `idcli: [redacted] in that URL stands for ${what.join(', ')}, not shown here; put the values back to resume\n`;
}

/** A resume URL too long to echo (a link can be megabytes), told by its page index, else its query, cut. */
function whereToResume(url: string): string {
  if (!URL.canParse(url)) return `it starts ${clip(url)}`;
  const u = new URL(url);
  const index = u.searchParams.get('pageIndex');
  if (index !== null && /^\d{1,15}$/.test(index)) return `it continues at pageIndex ${index}`;
  return u.search === '' ? `it starts ${clip(url)}` : `its query, cut: ${clip(u.search)}`;
}

/** After an answer that broke the contract (`sameAnswer`), running again would only meet that answer again. */
export function stoppedDumpMessage(itemsInFile: number, file: string, sameAnswer: boolean): string {
  const next = sameAnswer
    ? 'running the same command again gets the same answer from the service until it changes'
    : 'run the same command again to continue';
  return `idcli: stopped after ${itemCount(itemsInFile)} in ${printable(file)}; ${next}\n`;
}
