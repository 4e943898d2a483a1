import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { stoppedMessage } from '../../src/output/resume-hint.js';
import { shellQuote } from '../../src/shell-quote.js';

describe('resume hint', () => {
  it('names the items written and the command that fetches the rest', () => {
    expect(stoppedMessage(200, 'http://h/v1/users?pageIndex=2&pageSize=100')).toBe(
      "idcli: stopped after 200 items; resume with: idcli list 'http://h/v1/users?pageIndex=2&pageSize=100'\n",
    );
    expect(stoppedMessage(1, undefined)).toBe('idcli: stopped after 1 item\n');
  });

  it('skips the items of a page that were written when it was cut short', () => {
    expect(stoppedMessage(144, 'http://h/v1/users?pageIndex=1&pageSize=100', 44)).toBe(
      "idcli: stopped after 144 items; resume with: idcli list 'http://h/v1/users?pageIndex=1&pageSize=100' | tail -n +45\n",
    );
    expect(stoppedMessage(101, `http://h/v1/users?f=${'x'.repeat(300)}&pageIndex=1`, 1)).toMatch(
      /the resume URL is too long to show \(\d+ characters\); it continues at pageIndex 1, after its first 1 item\n$/,
    );
  });

  it('hides secret parameters and the known token, and says what [redacted] stands for', () => {
    const hide = (text: string) => text.split('tok-0123456789').join('[redacted]');
    expect(
      stoppedMessage(100, 'http://h/v1/tok-0123456789/users?pageIndex=1&X-Amz-Signature=s1&api_key=k1&c=2', 0, hide),
    ).toBe(
      "idcli: stopped after 100 items; resume with: idcli list 'http://h/v1/[redacted]/users?pageIndex=1&X-Amz-Signature=[redacted]&api_key=[redacted]&c=2'\n" +
        'idcli: [redacted] in that URL stands for the value of X-Amz-Signature, the value of api_key, the access ' +
        'token (`idcli token` prints it), not shown here; put the values back to resume\n',
    );
    expect(stoppedMessage(100, 'http://h/v1/users?pageIndex=1&sig=s1', 0)).toMatch(
      /sig=\[redacted\]'\nidcli: \[redacted\] in that URL stands for the value of sig, not shown here; put the values back to resume\n$/,
    );
    // Nothing hidden: no note.
    expect(stoppedMessage(100, 'http://h/v1/users?pageIndex=1&cursor=abc', 0, hide).split('\n')).toHaveLength(2);
  });

  it('quotes for a POSIX shell, single quotes included', () => {
    const word = "http://h/a'b?c=$(x)&d=`y`";
    const echoed = execFileSync('sh', ['-c', `printf %s ${shellQuote(word)}`]).toString();
    expect(echoed).toBe(word);
  });
});
