/** How `idcli api -i` shows a response's head. */
import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from '../http/types.js';

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
