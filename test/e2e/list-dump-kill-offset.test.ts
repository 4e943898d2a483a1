// Needs a process: runs are killed with SIGKILL at random moments of the walk, each resumed by the next one.
/** `idcli list -o FILE` killed over an offset walk with pages in flight, and resumed (see test/support/dump-kill.ts). */
import { describe, it } from 'vitest';
import { SCHEMES } from '../support/scheme.js';
import { itemsForKills, killedOverAndOver, killSuite } from '../support/dump-kill.js';
import { plainItems } from '../support/list.js';

// Each scheme's suite has an emulator of its own: the two run at the same time.
describe.concurrent.each(SCHEMES)(
  'idcli list -o FILE killed with SIGKILL 20 times over one walk, over %s',
  (scheme) => {
    const suite = killSuite(scheme);

    it('an offset walk with pages in flight: the finished FILE is byte-identical to a clean run', async () => {
      const items = plainItems(itemsForKills(20, 4));
      await killedOverAndOver(suite, '/v1/items', { type: 'offset', items }, 20, 4);
    }, 240_000);
  },
);
