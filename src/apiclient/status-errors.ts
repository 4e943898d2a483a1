/**
 * What an API answer means, the same for `list` and `api`: a 2xx is theirs to read, any other status a one-line
 * error, exit 4, or 3 for a 401 that a fresh token did not cure. The reason phrase is the standard one, not the
 * server's: the response body and headers stay out of messages.
 */
import { ExitCode, IdcliError } from '../errors.js';
import { withReason } from '../http/status-text.js';
import { headerValue, type HttpResponse } from '../http/types.js';
import { redactUrl } from '../redact.js';
import type { ApiResponse } from './client.js';

/**
 * The one response processor: undefined for a 2xx, else the error the command ends with. A 401 that was not
 * repeated ends with why: the refresh's own error, or that its body (read from `bodyFrom`) cannot go out again.
 */
export function responseError(method: string, url: string, res: ApiResponse, bodyFrom = 'its source'): unknown {
  if (res.status >= 200 && res.status < 300) return undefined;
  if (res.unrepeated?.because === 'refresh') return res.unrepeated.error;
  if (res.unrepeated?.because === 'body') return notRepeated(method, url, bodyFrom);
  return statusError(method, url, res);
}

function statusError(method: string, url: string, res: HttpResponse & { retries?: number }): IdcliError {
  const where = `${method} ${redactUrl(url)}`;
  const status = `HTTP ${withReason(res.status)}`;
  if (res.status === 401) {
    return new IdcliError(
      'API_UNAUTHORIZED',
      `${where}: the access token was rejected (${status}) even after a refresh`,
      ExitCode.AUTH,
      {
        hint: 'sign in again with: idcli login',
        status: res.status,
      },
    );
  }
  if (res.status >= 300 && res.status < 400) {
    return new IdcliError(
      'API_REDIRECT',
      `${where}: the server answered a redirect (${status})${redirectTarget(res, url)}, which idcli does not follow so the access token stays with ${new URL(url).origin}`,
      ExitCode.NETWORK,
      { hint: 'point --api-base-url (or the URL) at the final location', status: res.status },
    );
  }
  const retries = res.retries ?? 0;
  const after = retries > 0 ? ` after ${retries} ${retries === 1 ? 'retry' : 'retries'}` : '';
  return new IdcliError('API_STATUS', `${where} failed: ${status}${after}`, ExitCode.NETWORK, {
    status: res.status,
    ...(res.status === 404 ? { hint: 'check the path and --api-base-url' } : {}),
    ...(res.status === 403 ? { hint: 'the signed-in user may lack access to this resource' } : {}),
  });
}

/** A 401 for a body that went out as it was read: the fresh token is stored, but the body cannot go out again. */
function notRepeated(method: string, url: string, bodyFrom: string): IdcliError {
  return new IdcliError(
    'API_UNAUTHORIZED_UNREPEATED',
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
