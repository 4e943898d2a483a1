import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { askForAddress } from '../../src/output/address-prompt.js';
import { screen } from '../support/terminal.js';

/** A terminal's output side: what was written, in order. */
function terminal(isTTY = true) {
  const out = new PassThrough() as PassThrough & { isTTY?: boolean };
  out.isTTY = isTTY;
  let text = '';
  out.on('data', (b: Buffer) => (text += b.toString()));
  return { out, text: () => text };
}

const tick = () => new Promise((r) => setImmediate(r));
const Q = 'Paste the address:';

/** askForAddress asking Q, erasing, on a fresh input and terminal: `seen` records each line `take` was offered. */
function ask(take: (line: string) => string | undefined = () => 'no', isTTY = true) {
  const input = new PassThrough();
  const t = terminal(isTTY);
  const seen: string[] = [];
  const prompt = askForAddress({
    input,
    output: t.out,
    question: Q,
    erase: true,
    take: (line) => (seen.push(line), take(line)),
  });
  return { input, t, seen, prompt };
}

describe('askForAddress', () => {
  it('asks again with the reason until a line is taken, then stops reading', async () => {
    const { input, t, seen, prompt } = ask((line) => (line === 'good' ? undefined : 'that is not it'));
    input.write('bad\n\ngood\nafter\n');
    await tick();
    expect(seen).toEqual(['bad', 'good']);
    // The terminal echoes the typing itself; here only idcli's side is written.
    expect(t.text()).toBe(`${Q} That is not it.\n${Q} ${Q} `);
    expect(input.isPaused()).toBe(true);
    prompt.stop();
    expect(t.text()).toBe(`${Q} That is not it.\n${Q} ${Q} `);
  });

  it('takes a line pasted between bracketed-paste markers without them', async () => {
    const { input, t, seen } = ask((line) => (line === 'http://x/cb?code=1' ? undefined : 'no'));
    // An empty paste is an empty line: asked again, not refused.
    input.write('\x1b[200~\x1b[201~\n\x1b[200~http://x/cb?code=1\x1b[201~\n');
    await tick();
    expect(seen).toEqual(['http://x/cb?code=1']);
    expect(t.text()).toBe(`${Q} ${Q} `);
  });

  it('erases the question for a message and asks again below it; stop() erases it for good', async () => {
    const input = new PassThrough();
    const t = terminal();
    const log = createLogger(t.out, { verbose: false, quiet: false });
    const prompt = askForAddress({ input, output: t.out, question: Q, erase: true, take: () => 'no', messages: log });
    log.warn('$BROWSER exited with status 1');
    await tick();
    expect(screen(t.text())).toEqual(['warning: $BROWSER exited with status 1', `${Q} `]);
    prompt.stop();
    log.info('Signed in');
    await tick();
    expect(screen(t.text())).toEqual(['warning: $BROWSER exited with status 1', 'Signed in', '']);
  });

  it('ends the row instead of erasing it on a terminal that cannot, and at end of input', async () => {
    const t = terminal();
    askForAddress({ input: new PassThrough(), output: t.out, question: Q, erase: false, take: () => 'no' }).stop();
    await tick();
    expect(t.text()).toBe(`${Q} \n`);

    const { input, t: u } = ask();
    input.end();
    await tick();
    expect(u.text()).toBe(`${Q} \n`);
  });

  it('writes the question as a whole line when the output is not a terminal', async () => {
    const { input, t, prompt } = ask(undefined, false);
    input.write('x\n');
    await tick();
    prompt.stop();
    expect(t.text()).toBe(`${Q}\nNo.\n${Q}\n`);
  });
});
