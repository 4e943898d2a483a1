/** `idcli list -o FILE` killed over an offset walk with pages in flight, and resumed (see ./dump-kill.ts). */
import { describe, it } from 'vitest';
import { SCHEMES } from '../support/scheme.js';
import { killedOverAndOver, killSuite } from './dump-kill.js';
import { plainItems } from './helpers.js';

describe.each(SCHEMES)('idcli list -o FILE killed with SIGKILL 20 times over one walk, over %s', (scheme) => {
  killSuite(scheme);

  it('an offset walk with pages in flight: the finished FILE is byte-identical to a clean run', async () => {
    const items = plainItems(30_000);
    await killedOverAndOver('/v1/items', { type: 'offset', items }, 20, ['--concurrency', '4']);
  }, 240_000);
});
