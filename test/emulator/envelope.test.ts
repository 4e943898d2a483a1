import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, href } from './helpers.js';
import { type CollectionSpec, type Emulator, startEmulator } from './index.js';

// Every combination of paging type, layout and link style must be valid JSON carrying the raw items.
describe('envelope variants', { timeout: 30_000 }, () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
  });

  const items = ['{"id":1}', '{"id":2,"s":"a,b\\n"}', '{"id":3, "n": 1e400}'];
  const variants: Array<[string, CollectionSpec]> = [];
  for (const type of ['offset', 'cursor'] as const) {
    for (const pretty of [false, true]) {
      for (const linkStyle of ['object', 'string', 'relative'] as const) {
        for (const list of [items, []]) {
          const name = `/v1/${type}-${pretty ? 'pretty' : 'compact'}-${linkStyle}-${list.length}`;
          variants.push([
            name,
            { type, items: list, pretty, linkStyle, public: true, totalKnown: true, lastLink: true },
          ]);
        }
      }
    }
  }

  it.each(variants)('%s parses for pageSize 2, 0 and the default', async (path, spec) => {
    emu.setCollection(path, spec);
    for (const q of ['?pageSize=2', '?pageSize=0', '']) {
      const { status, text, body } = await getJson(`${emu.baseUrl}${path}${q}`);
      expect(status).toBe(200);
      const expected = q === '?pageSize=0' ? [] : spec.items.slice(0, q === '' ? 100 : 2);
      const sep = spec.pretty ? ',\n    ' : ',';
      if (expected.length > 0) expect(text).toContain(expected.join(sep));
      expect((body['items'] as unknown[]).length).toBe(expected.length);
      expect(body['totalItems']).toBe(spec.items.length);
      const self = href((body['links'] as Record<string, unknown>)['self']) as string;
      expect(
        spec.linkStyle === 'relative' ? self.startsWith(`${path}?`) : self.startsWith(`${emu.baseUrl}${path}?`),
      ).toBe(true);
    }
  });
});
