// Builds the pagination envelope as TEXT around the raw item bytes, so items are served exactly (numbers
// beyond 2^53, escapes and key order survive) and are never parsed or re-serialised.

export type LinkStyle = 'object' | 'string' | 'relative';

/** Separator between items inside the stored item bytes (the pretty form indents each item). */
export function itemSeparator(pretty: boolean): string {
  return pretty ? ',\n    ' : ',';
}

export interface EnvelopeParts {
  pageIndex?: number;
  totalItems?: number;
  /** Whether the page has items: the pretty form lays out an empty array differently. */
  hasItems: boolean;
  /** Link members in order, each already rendered as JSON text. */
  links: Array<[string, string]>;
}

/** A link member's JSON text: {"href": url} for object styles, the bare value otherwise; undefined drops it. */
export function linkText(style: LinkStyle, href: unknown, pretty: boolean): string | undefined {
  if (href === undefined) return undefined;
  const value = style === 'string' ? href : { href };
  const text = JSON.stringify(value, null, pretty ? 2 : undefined) as string | undefined;
  return pretty && text !== undefined ? text.replaceAll('\n', '\n    ') : text;
}

/** The text before and after the items' bytes: `head + items.join(separator) + tail` is the envelope. */
export function envelopeFrame(e: EnvelopeParts, pretty: boolean): { head: string; tail: string } {
  const members: string[] = [];
  const colon = pretty ? ': ' : ':';
  if (e.pageIndex !== undefined) members.push(`"pageIndex"${colon}${e.pageIndex}`);
  if (e.totalItems !== undefined) members.push(`"totalItems"${colon}${e.totalItems}`);
  if (!pretty) {
    const links = e.links.map(([name, text]) => `"${name}":${text}`).join(',');
    return { head: `{${[...members, '"items":['].join(',')}`, tail: `],"links":{${links}}}` };
  }
  const links = e.links.map(([name, text]) => `    "${name}": ${text}`).join(',\n');
  const open = e.hasItems ? '"items": [\n    ' : '"items": [';
  const close = e.hasItems ? '\n  ]' : ']';
  return {
    head: `{\n  ${[...members, open].join(',\n  ')}`,
    tail: `${close},\n  "links": {\n${links}\n  }\n}\n`,
  };
}
