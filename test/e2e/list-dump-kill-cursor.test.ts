// Needs a process: runs are killed with SIGKILL at random moments of the walk, each resumed by the next one.
/** `idcli list -o FILE` killed over a cursor walk, and resumed (see test/support/dump-kill.ts). */
import { describe, it } from 'vitest';
import { SCHEMES } from '../support/scheme.js';
import { itemsForKills, killedOverAndOver, killSuite } from '../support/dump-kill.js';
import { plainItems } from '../support/list.js';

// Each scheme's suite has an emulator of its own: the two run at the same time.
describe.concurrent.each(SCHEMES)(
  'idcli list -o FILE killed with SIGKILL 20 times over one walk, over %s',
  (scheme) => {
    const suite = killSuite(scheme);

    it('a cursor walk: the finished FILE is byte-identical to a clean run', async () => {
      const items = plainItems(itemsForKills(20, 1), 'e');
      await killedOverAndOver(suite, '/v1/events', { type: 'cursor', items }, 20, 1);
    }, 240_000);
  },
);
