/** How `idcli api` reports a response: the `-i` head, and the one-line error for a status that is not 2xx. */
import { STATUS_CODES } from 'node:http';
import { ExitCode, IdcliError } from '../errors.js';
import { headerValue, type HttpResponse } from '../http/types.js';
import { redactUrl } from '../redact.js';

/** The status line and header fields as they came, CRLF-terminated like the message itself (what `curl -i` prints). */
export function responseHead(res: HttpResponse): string {
  const reason = STATUS_CODES[res.status];
  let head = `HTTP/1.1 ${res.status}${reason ? ` ${reason}` : ''}\r\n`;
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${v}\r\n`;
  }
  return `${head}\r\n`;
}

/**
 * The error for a response that is not 2xx: exit 4, or 3 for a 401 that a fresh token did not cure. The reason
 * phrase is the standard one, not the server's: the response itself goes to stdout, never into a message.
 */
export function statusError(method: string, url: string, res: HttpResponse & { retries?: number }): IdcliError {
  const where = `${method} ${redactUrl(url)}`;
  const reason = STATUS_CODES[res.status];
  const status = `HTTP ${res.status}${reason ? ` ${reason}` : ''}`;
  if (res.status === 401) {
    return new IdcliError(`${where}: the access token was rejected (${status}) even after a refresh`, ExitCode.AUTH, {
      hint: 'sign in again with: idcli login',
    });
  }
  if (res.status >= 300 && res.status < 400) {
    const location = headerValue(res.headers, 'location');
    let target = '';
    try {
      if (location) target = ` to ${redactUrl(new URL(location, url))}`;
    } catch {
      // An unparseable Location is simply not named.
    }
    return new IdcliError(
      `${where}: the server answered a redirect (${status})${target}, which idcli does not follow so the access token stays with ${new URL(url).origin}`,
      ExitCode.NETWORK,
      { hint: 'call the final location directly' },
    );
  }
  const retries = res.retries ?? 0;
  const after = retries > 0 ? ` after ${retries} ${retries === 1 ? 'retry' : 'retries'}` : '';
  return new IdcliError(`${where} failed: ${status}${after}`, ExitCode.NETWORK, {
    ...(res.status === 404 ? { hint: 'check the path and --api-base-url' } : {}),
    ...(res.status === 403 ? { hint: 'the signed-in user may lack access to this resource' } : {}),
  });
}
