/**
 * The page size idcli asks for: 1000 items unless the user says otherwise (the flag, the target, IDCLI_PAGE_SIZE or
 * the config file), no more than --limit needs, the service's default once after a 400, and the size served when the
 * server serves fewer. Run in process against the emulator; the output is byte-exact in every case.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../emulator/index.js';
import { cliEnv, listCommand, type ListEnv, listEnv, ndjson, plainItems } from '../../support/list.js';
import { runCommand } from '../../support/run-command.js';

const ITEMS = plainItems(2500);
/** No IDCLI_PAGE_SIZE: idcli's own default applies (the helpers set `service` for the other tests). */
const DEFAULT = { IDCLI_PAGE_SIZE: undefined };

let emu: Emulator | undefined;
let env: (ListEnv & { cleanup: () => Promise<void> }) | undefined;

async function setUp(opts: EmulatorOptions = {}): Promise<ListEnv> {
  emu = await startEmulator(opts);
  env = await listEnv(emu, emu.mintTokens().access_token);
  emu.setCollection('/v1/items', { type: 'offset', items: [...ITEMS] });
  emu.setCollection('/v1/cursor', { type: 'cursor', items: [...ITEMS] });
  return env;
}
afterEach(async () => {
  await emu?.close();
  await env?.cleanup();
  emu = undefined;
  env = undefined;
});

/** The query of each request, as `pageIndex/pageSize` (`-` for an absent one), in the order sent. */
function asked(requests: string[]): string[] {
  return requests.map((u) => {
    const q = new URL(u, 'http://x').searchParams;
    return `${q.get('pageIndex') ?? '-'}/${q.get('pageSize') ?? (q.has('cursor') ? 'cursor' : '-')}`;
  });
}

describe('idcli list: the page size it asks for', () => {
  it.each(['auto', '1'])(
    'asks for 1000 items a page by default (--concurrency %s)',
    async (window) => {
      const e = await setUp();
      const r = await listCommand(e, ['/v1/items', '--concurrency', window], { extraEnv: DEFAULT });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));
      expect(asked(r.requests)).toEqual(['-/1000', '1/1000', '2/1000']);
    },
    60_000,
  );

  it('asks a cursor collection for 1000 items a page too', async () => {
    const e = await setUp();
    const r = await listCommand(e, ['/v1/cursor'], { extraEnv: DEFAULT });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(asked(r.requests)).toEqual(['-/1000', '-/cursor', '-/cursor']);
  }, 60_000);

  it.each([
    [1, ['-/1']],
    [50, ['-/50']],
    [1000, ['-/1000']],
    [1500, ['-/1000', '1/1000']],
  ])(
    '--limit %i asks for no larger a page than it needs',
    async (limit, expected) => {
      const e = await setUp();
      const r = await listCommand(e, ['/v1/items', '--limit', String(limit)], { extraEnv: DEFAULT });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, limit)));
      expect(asked(r.requests)).toEqual(expected);
    },
    60_000,
  );

  it('a 400 to its own size: asks once more with the service default of 100, and says so with --verbose', async () => {
    const e = await setUp({ maxPageSize: 500 });
    const quiet = await listCommand(e, ['/v1/items', '--concurrency', '1'], { extraEnv: DEFAULT });
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe(ndjson(ITEMS));
    expect(quiet.stderr).toBe('');
    expect(asked(quiet.requests).slice(0, 3)).toEqual(['-/1000', '-/100', '1/100']);
    expect(quiet.requests).toHaveLength(1 + 25);

    const verbose = await listCommand(e, ['/v1/items', '--verbose'], { extraEnv: DEFAULT });
    expect(verbose.code).toBe(0);
    expect(verbose.stdoutBytes.equals(quiet.stdoutBytes)).toBe(true);
    expect(verbose.stderr).toContain(
      'the server refused pageSize=1000, the size idcli chose; asking again with its default of 100',
    );
  }, 60_000);

  it('a 422 to its own size gets the same fallback as a 400, at every window', async () => {
    const e = await setUp({ maxPageSize: 500, overMaxPageSize: 'unprocessable' });
    for (const window of ['auto', '1', '4']) {
      const r = await listCommand(e, ['/v1/items', '--concurrency', window], { extraEnv: DEFAULT });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));
      expect(r.stderr).toBe('');
      expect(asked(r.requests).slice(0, 2)).toEqual(['-/1000', '-/100']);
      expect(r.requests).toHaveLength(1 + 25);
    }
  }, 60_000);

  it.each([
    ['refuse', 400, [], '1000, then the service default of 100', ['-/1000', '-/100']],
    ['unprocessable', 422, [], '1000, then the service default of 100', ['-/1000', '-/100']],
    ['unprocessable', 422, ['--limit', '60'], '60', ['-/60']],
  ] as const)(
    "when the server refuses the sizes idcli chose (%s), the error names the target as given and the sizes as idcli's",
    async (over, status, flags, sizes, expected) => {
      const e = await setUp({ maxPageSize: 50, overMaxPageSize: over });
      for (const window of ['auto', '1']) {
        const r = await listCommand(e, ['/v1/items?filter=x', ...flags, '--concurrency', window], {
          extraEnv: DEFAULT,
        });
        expect(r.code).toBe(4);
        expect(r.stdout).toBe('');
        expect(asked(r.requests)).toEqual(expected);
        expect(r.stderr).toMatch(
          new RegExp(
            `^error: GET ${e.emu.baseUrl}/v1/items\\?filter=x failed: HTTP ${status} [A-Za-z ]+ to the page size ` +
              `idcli chose \\(${sizes}\\); give --page-size a size the server accepts, or --page-size service to send none\n$`,
          ),
        );
        expect(r.stderr).not.toContain('pageSize');
      }
    },
    60_000,
  );

  it('a server that serves fewer than asked while linking further sets the size for the rest of the walk', async () => {
    const e = await setUp({ maxPageSize: 300, overMaxPageSize: 'cap' });
    for (const window of ['auto', '1']) {
      const r = await listCommand(e, ['/v1/items', '--concurrency', window], { extraEnv: DEFAULT });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));
      expect(r.requests).toHaveLength(9);
      expect(asked(r.requests)[0]).toBe('-/1000');
      expect(
        asked(r.requests)
          .slice(1)
          .every((a) => a.endsWith('/300')),
      ).toBe(true);
    }
  }, 60_000);

  it('a size the user gives is never changed, even when the server refuses it', async () => {
    const e = await setUp({ maxPageSize: 500 });
    const r = await listCommand(e, ['/v1/items', '--page-size', '2000'], { extraEnv: DEFAULT });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/HTTP 400/);
    expect(asked(r.requests)).toEqual(['-/2000']);
    const inTarget = await listCommand(e, ['/v1/items?pageSize=2000'], { extraEnv: DEFAULT });
    expect(inTarget.code).toBe(4);
    expect(asked(inTarget.requests)).toEqual(['-/2000']);
  }, 60_000);

  it('the flag beats the target, the target beats IDCLI_PAGE_SIZE, which beats the config file', async () => {
    const e = await setUp();
    const cases: Array<[string[], Record<string, string | undefined>, string]> = [
      [['/v1/items?pageSize=50', '--page-size', '30'], { IDCLI_PAGE_SIZE: '70' }, '-/30'],
      [['/v1/items?pageSize=50'], { IDCLI_PAGE_SIZE: '70' }, '-/50'],
      [['/v1/items?pageSize=50', '--page-size', 'auto'], {}, '-/50'],
      [['/v1/items'], { IDCLI_PAGE_SIZE: '70' }, '-/70'],
      [['/v1/items'], { IDCLI_PAGE_SIZE: 'service' }, '-/-'],
      [['/v1/items', '--page-size', 'service'], DEFAULT, '-/-'],
      [['/v1/items', '--page-size', 'auto'], { IDCLI_PAGE_SIZE: '70' }, '-/1000'],
    ];
    for (const [args, extraEnv, first] of cases) {
      const r = await listCommand(e, [...args, '--limit', '1000', '--concurrency', '1'], { extraEnv });
      expect(r.code).toBe(0);
      expect(asked(r.requests)[0]).toBe(first);
    }
    const set = await runCommand(['config', 'set', 'page-size', '80'], { env: cliEnv(e) });
    expect(set.code).toBe(0);
    const fromFile = await listCommand(e, ['/v1/items', '--limit', '100'], { extraEnv: DEFAULT });
    expect(asked(fromFile.requests)).toEqual(['-/80', '1/80']);
    expect(fromFile.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
    const envWins = await listCommand(e, ['/v1/items', '--limit', '100'], { extraEnv: { IDCLI_PAGE_SIZE: '60' } });
    expect(asked(envWins.requests)).toEqual(['-/60', '1/60']);
  }, 60_000);

  it.each([
    ['IDCLI_PAGE_SIZE', 'lots', "error: page-size must be auto, service or a whole number, not 'lots'"],
    ['IDCLI_PAGE_SIZE', '-5', "error: page-size must be auto, service or a whole number, not '-5'"],
  ])(
    '%s=%s is exit 2 before any request',
    async (name, value, message) => {
      const e = await setUp();
      const r = await listCommand(e, ['/v1/items'], { extraEnv: { [name]: value } });
      expect(r.code).toBe(2);
      expect(r.stderr.startsWith(message)).toBe(true);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.requests).toEqual([]);
    },
    60_000,
  );

  it.each([
    ['--page-size 0', ['--page-size', '0'], {}, 'page-size 0'],
    ['IDCLI_PAGE_SIZE=0', [], { IDCLI_PAGE_SIZE: '0' }, 'page-size 0'],
    ['IDCLI_PAGE_SIZE=" 000 "', [], { IDCLI_PAGE_SIZE: ' 000 ' }, 'page-size 0'],
    ['config page-size 0', [], 'config', 'page-size 0'],
    ["the target's pageSize=0", ['?pageSize=0'], {}, "the target's pageSize=0"],
    ["the target's pageSize=00", ['?pageSize=00'], {}, "the target's pageSize=0"],
  ] as const)(
    'a page size of 0 cannot walk: %s is exit 2 before any request, with a hint to --count',
    async (_, args, source, what) => {
      const e = await setUp();
      if (source === 'config') {
        const set = await runCommand(['config', 'set', 'page-size', '0'], { env: cliEnv(e) });
        expect(set.code, set.stderr).toBe(0);
      }
      const extraEnv = source === 'config' ? DEFAULT : { ...DEFAULT, ...source };
      const [target, flags] = args[0]?.startsWith('?') ? [`/v1/items${args[0]}`, []] : ['/v1/items', args];
      for (const window of ['auto', '1']) {
        const r = await listCommand(e, [target, ...flags, '--limit', '10', '--concurrency', window], { extraEnv });
        expect(r.code).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(
          `error: ${what} asks for pages of no items, which never reach the end of a collection; ` +
            'use --count for the number of items; to list them, give a page size of 1 or more, auto or service\n',
        );
        expect(r.requests).toEqual([]);
      }
      // --count asks with pageSize=0 itself: the setting does not stand in its way.
      const count = await listCommand(e, [target, ...flags, '--count'], { extraEnv });
      expect(count.code, count.stderr).toBe(0);
      expect(count.stdout).toBe(`${ITEMS.length}\n`);
    },
    60_000,
  );

  it('--page-size refuses a word other than auto and service', async () => {
    const e = await setUp();
    const r = await listCommand(e, ['/v1/items', '--page-size', 'big']);
    expect(r.code).toBe(2);
    expect(r.requests).toEqual([]);
  }, 60_000);
});
