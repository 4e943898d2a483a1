/**
 * The one-line error for an API answer that is not 2xx, the same for `list` and `api`: exit 4, or 3 for a 401 that a
 * fresh token did not cure. The reason phrase is the standard one, not the server's: the response body and headers
 * stay out of messages.
 */
import { ExitCode, IdcliError } from '../errors.js';
import { headerValue, type HttpResponse } from '../http/types.js';
import { redactUrl } from '../redact.js';

export function statusError(method: string, url: string, res: HttpResponse & { retries?: number }): IdcliError {
  const where = `${method} ${redactUrl(url)}`;
  // node:http is loaded for its table only here, on the way out: a walk itself never needs it.
  const reason = process.getBuiltinModule('node:http').STATUS_CODES[res.status];
  const status = `HTTP ${res.status}${reason ? ` ${reason}` : ''}`;
  if (res.status === 401) {
    return new IdcliError(`${where}: the access token was rejected (${status}) even after a refresh`, ExitCode.AUTH, {
      hint: 'sign in again with: idcli login',
    });
  }
  if (res.status >= 300 && res.status < 400) {
    return new IdcliError(
      `${where}: the server answered a redirect (${status})${redirectTarget(res, url)}, which idcli does not follow so the access token stays with ${new URL(url).origin}`,
      ExitCode.NETWORK,
      { hint: 'point --api-base-url (or the URL) at the final location' },
    );
  }
  const retries = res.retries ?? 0;
  const after = retries > 0 ? ` after ${retries} ${retries === 1 ? 'retry' : 'retries'}` : '';
  return new IdcliError(`${where} failed: ${status}${after}`, ExitCode.NETWORK, {
    ...(res.status === 404 ? { hint: 'check the path and --api-base-url' } : {}),
    ...(res.status === 403 ? { hint: 'the signed-in user may lack access to this resource' } : {}),
  });
}

/** A 401 for a body that went out as it was read: the fresh token is stored, but the body cannot go out again. */
export function notRepeated(method: string, url: string, bodyFrom: string): IdcliError {
  return new IdcliError(
    `${method} ${redactUrl(url)}: the access token was rejected (HTTP 401 Unauthorized), and the request was not ` +
      `repeated: its body from ${bodyFrom} was sent as it was read and cannot be sent again`,
    ExitCode.AUTH,
    { hint: 'the token is refreshed now; run the command again' },
  );
}

/**
 * " to <origin>" for the Location of a redirect; only the origin, as a query there may carry anything. A URL whose
 * origin is opaque (file:, data:, …) has none to name ("null"): it is named whole, redacted as every URL in a message.
 */
function redirectTarget(res: HttpResponse, url: string): string {
  const location = headerValue(res.headers, 'location');
  try {
    if (!location) return '';
    const target = new URL(location, url);
    return ` to ${target.origin === 'null' ? redactUrl(target) : target.origin}`;
  } catch {
    return ''; // An unparseable Location is simply not named.
  }
}
