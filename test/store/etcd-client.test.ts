import { describe, expect, it } from 'vitest';
import { b64, kvsOf } from '../../src/store/etcd-client.js';

describe("kvsOf: the gateway's key-values read as text", () => {
  it('decodes keys and values, and takes a 64-bit lease sent as a string or a small one sent as a number', () => {
    const range = {
      kvs: [
        { key: b64('idcli/a'), value: b64('{"v":1}'), mod_revision: '7', lease: '7587883452' },
        { key: b64('idcli/b'), value: b64(''), mod_revision: 8, lease: 42 },
      ],
    };
    expect(kvsOf(range)).toEqual([
      { key: 'idcli/a', value: '{"v":1}', modRevision: 7, lease: '7587883452' },
      { key: 'idcli/b', value: '', modRevision: 8, lease: '42' },
    ]);
  });

  it('reads a field that is neither a string nor a number as absent, never as "[object Object]"', () => {
    const range = { kvs: [{ key: { nested: true }, value: [b64('x')], mod_revision: '3', lease: { id: 1 } }] };
    expect(kvsOf(range)).toEqual([{ key: '', value: '', modRevision: 3, lease: '0' }]);
  });
});
