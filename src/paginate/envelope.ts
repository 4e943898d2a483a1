import { isUtf8 } from 'node:buffer';
import { ExitCode, IdcliError } from '../errors.js';
import { redactUrl } from '../redact.js';
import { type ItemSpans, JsonSyntaxError, parseSpan, type ScannedPage, scanPage, type SpanTable } from './json-scan.js';
import { linkHref } from './peek-links.js';
import { isJsonObject } from '../shape.js';

/** One validated page of a collection (offset- or cursor-based, see the service contract). */
export interface Page {
  /** The URL this page was fetched from (absolute). */
  url: string;
  /** The raw response body; consumed when the items are written. */
  body: Buffer;
  items: ItemSpans;
  itemCount: number;
  /** links.next exactly as given (absolute or relative), when a page follows. */
  next?: string;
  self: string;
  first: string;
  /** Offset-based envelopes only. */
  pageIndex?: number;
  /** The raw integer text, so counts beyond 2^53 print exactly; absent when the server does not know. */
  totalItems?: string;
}

const INTEGER = /^(?:0|[1-9][0-9]*)$/;

/** Builds the exit-5 error that names the offending page (redacted: cursors stay, secrets never appear). */
export function contractError(pageUrl: string, problem: string, cause?: unknown): IdcliError {
  return new IdcliError(
    'CONTRACT_MALFORMED_PAGE',
    `malformed page ${redactUrl(pageUrl)}: ${problem}`,
    ExitCode.CONTRACT,
    { cause },
  );
}

/**
 * Validates a page body as the service contract's envelope (exit 5 naming the page otherwise). With `table`, the item
 * spans live in that reused table, valid until its next page.
 */
export function parsePage(body: Buffer, pageUrl: string, table?: SpanTable): Page {
  if (!isUtf8(body)) throw contractError(pageUrl, 'the body is not valid UTF-8');
  let scanned: ScannedPage;
  try {
    scanned = scanPage(body, table);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw contractError(pageUrl, `invalid JSON (${err.message})`, err);
    throw err;
  }
  // A declaration, not an arrow function: only then does each call below narrow what it checked.
  function bad(problem: string): never {
    throw contractError(pageUrl, problem);
  }
  if (scanned.notAnObject) bad('the body is not a JSON object');
  for (const key of ['items', 'links', 'pageIndex', 'totalItems']) {
    if (scanned.duplicates.has(key)) bad(`"${key}" appears more than once`);
  }
  const items = scanned.items;
  if (!items) bad(scanned.members.has('items') ? '"items" is not an array' : '"items" is missing');
  if (items.firstNonObject >= 0) bad(`items[${items.firstNonObject}] is not a JSON object`);

  const linksSpan = scanned.members.get('links');
  if (!linksSpan) bad('"links" is missing');
  const links = parseSpan(body, linksSpan);
  if (!isJsonObject(links)) bad('"links" is not an object');
  const linkMap = links;

  const link = (name: string): string | undefined => {
    const href = linkHref(linkMap, name);
    return href === null ? bad(`links.${name} must be an object with an "href" string or a string`) : href;
  };
  const self = link('self');
  const first = link('first');
  if (self === undefined) bad('links.self is missing');
  if (first === undefined) bad('links.first is missing');
  const next = link('next');

  const index = integerMember(body, scanned, 'pageIndex', bad);
  const totalItems = integerMember(body, scanned, 'totalItems', bad);
  const pageIndex = index === undefined ? undefined : Number(index);
  if (pageIndex !== undefined && !Number.isSafeInteger(pageIndex)) bad('"pageIndex" is out of range');

  return { url: pageUrl, body, items, itemCount: items.count, self, first, next, pageIndex, totalItems };
}

function integerMember(
  body: Buffer,
  scanned: ScannedPage,
  name: string,
  bad: (p: string) => never,
): string | undefined {
  const span = scanned.members.get(name);
  if (!span) return undefined;
  const text = body.toString('latin1', span.start, span.end);
  if (!INTEGER.test(text)) bad(`"${name}" is not a non-negative integer`);
  return text;
}
