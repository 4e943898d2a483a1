import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote, stoppedMessage } from '../../src/output/resume-hint.js';

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

  it('quotes for a POSIX shell, single quotes included', () => {
    const word = "http://h/a'b?c=$(x)&d=`y`";
    const echoed = execFileSync('sh', ['-c', `printf %s ${shellQuote(word)}`]).toString();
    expect(echoed).toBe(word);
  });
});
