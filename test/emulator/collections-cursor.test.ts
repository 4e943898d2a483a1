import { describe, expect, it } from 'vitest';
import { eachEmulator, getJson, href } from './helpers.js';
import { type Emulator, generateEvents } from './index.js';

describe('cursor-based collections', { timeout: 30_000 }, () => {
  let emu: Emulator;
  let auth: Record<string, string>;
  eachEmulator((e, a) => {
    emu = e;
    auth = a;
  });

  const links = (body: Record<string, unknown>) => body['links'] as Record<string, unknown>;
  const ids = (body: Record<string, unknown>) => (body['items'] as Array<{ id: string }>).map((i) => i.id);

  async function walk(start: string) {
    const seen: string[] = [];
    const sizes: number[] = [];
    let url: string | undefined = start;
    while (url) {
      const { status, body } = await getJson(url, auth);
      expect(status).toBe(200);
      seen.push(...ids(body));
      sizes.push(ids(body).length);
      url = href(links(body)['next']);
    }
    return { seen, sizes };
  }

  it('returns the first page first, with no pageIndex, no totalItems and no last by default', async () => {
    const { body } = await getJson(`${emu.baseUrl}/v1/events`, auth);
    expect(Object.keys(body)).toEqual(['items', 'links']);
    expect(ids(body)).toHaveLength(100);
    expect(ids(body)[0]).toBe('e0001');
    const l = links(body);
    expect(Object.keys(l)).toEqual(['self', 'first', 'next']);
    expect(href(l['self'])).toBe(`${emu.baseUrl}/v1/events?pageSize=100`);
    expect(href(l['next'])).toMatch(new RegExp(`^${emu.baseUrl}/v1/events\\?cursor=[A-Za-z0-9_.-]+$`));
  });

  it('walks all pages by links.next in a stable order', async () => {
    const a = await walk(`${emu.baseUrl}/v1/events?pageSize=50`);
    expect(a.sizes).toEqual([50, 50, 50, 50, 30]);
    expect(a.seen).toEqual(generateEvents(230).map((e) => (JSON.parse(e) as { id: string }).id));
    const b = await walk(`${emu.baseUrl}/v1/events?pageSize=50`);
    expect(b.seen).toEqual(a.seen);
  });

  it('links prev back to the preceding page', async () => {
    const first = await getJson(`${emu.baseUrl}/v1/events?pageSize=10`, auth);
    expect(links(first.body)['prev']).toBeUndefined();
    const second = await getJson(href(links(first.body)['next']) as string, auth);
    expect(href(links(second.body)['prev'])).toBe(`${emu.baseUrl}/v1/events?pageSize=10`);
    const third = await getJson(href(links(second.body)['next']) as string, auth);
    const back = await getJson(href(links(third.body)['prev']) as string, auth);
    expect(ids(back.body)).toEqual(ids(second.body));
  });

  it('includes totalItems and links.last only when configured', async () => {
    emu.setCollection('/v1/c', { type: 'cursor', items: generateEvents(25), totalKnown: true, lastLink: true });
    const { body } = await getJson(`${emu.baseUrl}/v1/c?pageSize=10`, auth);
    expect(Object.keys(body)).toEqual(['totalItems', 'items', 'links']);
    expect(body['totalItems']).toBe(25);
    const last = await getJson(href(links(body)['last']) as string, auth);
    expect(ids(last.body)).toEqual(['e0021', 'e0022', 'e0023', 'e0024', 'e0025']);
    expect(links(last.body)['next']).toBeUndefined();
  });

  it('answers pageSize=0 with empty items and no next', async () => {
    const { body } = await getJson(`${emu.baseUrl}/v1/events?pageSize=0`, auth);
    expect(body['items']).toEqual([]);
    expect(Object.keys(links(body))).toEqual(['self', 'first']);
  });

  it('refuses pageIndex, invalid or foreign cursors, and edited links', async () => {
    const first = await getJson(`${emu.baseUrl}/v1/events?pageSize=10&filter=x`, auth);
    const next = href(links(first.body)['next']) as string;
    expect((await getJson(next, auth)).status).toBe(200);
    const cursor = new URL(next).searchParams.get('cursor') as string;
    emu.setCollection('/v1/other', { type: 'cursor', items: generateEvents(30) });
    for (const url of [
      `${emu.baseUrl}/v1/events?pageIndex=1`,
      `${emu.baseUrl}/v1/events?cursor=garbage`,
      `${emu.baseUrl}/v1/events?cursor=`,
      `${emu.baseUrl}/v1/events?filter=x&cursor=${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`,
      `${emu.baseUrl}/v1/events?cursor=${cursor}`, // the filter was dropped
      `${emu.baseUrl}/v1/events?filter=x&cursor=${cursor}&pageSize=50`, // pageSize added to a returned link
      `${emu.baseUrl}/v1/other?filter=x&cursor=${cursor}`,
      `${emu.baseUrl}/v1/events?pageSize=-1`,
    ]) {
      const { status, body } = await getJson(url, auth);
      expect(status, url).toBe(400);
      expect(body['error']).toBe('invalid_request');
    }
  });

  it('serves raw item bytes and the pretty envelope', async () => {
    const items = ['{"id":1, "n":123456789012345678901234567890}', '{"b":"\\ud83d\\ude00","id":2}'];
    emu.setCollection('/v1/raw', { type: 'cursor', items, pretty: true, linkStyle: 'string' });
    const { text, body } = await getJson(`${emu.baseUrl}/v1/raw`, auth);
    expect(text).toContain(`"items": [\n    ${items.join(',\n    ')}\n  ]`);
    expect(links(body)['self']).toBe(`${emu.baseUrl}/v1/raw?pageSize=100`);
  });
});
