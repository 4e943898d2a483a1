/**
 * The peer of the link section: what a script does with Node alone. Node's global fetch (undici, which asks for
 * gzip by itself and decodes it) follows links.next from the given URL, JSON.parse per page, each item written
 * to stdout as one line of JSON. Usage: node fetch-loop.mjs <first-page-url>
 * Bundled to plain JS by the bench so it starts exactly like the built CLI (no TypeScript loader).
 */
import { once } from 'node:events';

interface Page {
  items: unknown[];
  links: { next?: { href: string } | string };
}

let url: string | undefined = process.argv[2];
while (url !== undefined) {
  const res = await fetch(url, { headers: { authorization: 'Bearer bench' } });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  const page = JSON.parse(await res.text()) as Page;
  let lines = '';
  for (const item of page.items) lines += `${JSON.stringify(item)}\n`;
  if (!process.stdout.write(lines)) await once(process.stdout, 'drain');
  const next = page.links.next;
  url = typeof next === 'string' ? next : next?.href;
}
