// The reason phrase is the standard one, not the server's: the response body and headers stay out of messages.
import { ExitCode, IdcliError } from '../errors.js';
import { withReason } from '../http/status-text.js';
import { headerValue, type HttpResponse } from '../http/types.js';
import { redactUrl } from '../redact.js';
import type { ApiResponse } from './client.js';

/** Undefined for a 2xx, else the error the command ends with (exit 4, or 3 for a 401 a fresh token did not cure). */
export function responseError(
  method: string,
  url: string,
  res: ApiResponse,
  bodyFrom = 'its source',
): Error | undefined {
  if (res.status >= 200 && res.status < 300) return undefined;
  if (res.unrepeated?.because === 'refresh') return res.unrepeated.error;
  if (res.unrepeated?.because === 'body')
    return new IdcliError(
      'API_UNAUTHORIZED_UNREPEATED',
      `${method} ${redactUrl(url)}: the access token was rejected (HTTP 401 Unauthorized), and the request was not ` +
        `repeated: its body from ${bodyFrom} was sent as it was read and cannot be sent again`,
      ExitCode.AUTH,
      { hint: 'the token is refreshed now; run the command again' },
    );
  return statusError(method, url, res);
}

function statusError(method: string, url: string, res: HttpResponse & { retries?: number }): IdcliError {
  const where = `${method} ${redactUrl(url)}`;
  const status = `HTTP ${withReason(res.status)}`;
  if (res.status === 401) {
    const message = `${where}: the access token was rejected (${status}) even after a refresh`;
    return new IdcliError('API_UNAUTHORIZED', message, ExitCode.AUTH, {
      hint: 'sign in again with: idcli login',
      status: res.status,
    });
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

/** Only the origin, as a query may carry anything; an opaque origin (file:, data:) is named whole, redacted. */
function redirectTarget(res: HttpResponse, url: string): string {
  const location = headerValue(res.headers, 'location');
  // An unparseable Location is simply not named.
  if (!location || !URL.canParse(location, url)) return '';
  const target = new URL(location, url);
  return ` to ${target.origin === 'null' ? redactUrl(target) : target.origin}`;
}
