/** kubectl's ExecCredential as idcli writes it, in both API versions kubectl may ask for. */
import { describe, expect, it } from 'vitest';
import { execApiVersion, execCredential } from '../../../src/commands/credential/exec-credential.js';
import { IdcliError } from '../../../src/errors.js';

/** KUBERNETES_EXEC_INFO as kubectl 1.32 sets it (provideClusterInfo: false), for each API version. */
const INFO = {
  v1: '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}',
  v1beta1: '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}',
};

describe('execApiVersion', () => {
  it('is the version KUBERNETES_EXEC_INFO names, v1 when it is unset', () => {
    expect(execApiVersion(INFO.v1)).toBe('client.authentication.k8s.io/v1');
    expect(execApiVersion(INFO.v1beta1)).toBe('client.authentication.k8s.io/v1beta1');
    expect(execApiVersion(undefined)).toBe('client.authentication.k8s.io/v1');
    expect(execApiVersion('')).toBe('client.authentication.k8s.io/v1');
  });

  it('refuses a version it cannot write, or an info that is not JSON, as a usage error', () => {
    for (const info of ['{"apiVersion":"client.authentication.k8s.io/v1alpha1"}', '{', '[]', '{"apiVersion":1}']) {
      const err = (() => {
        try {
          execApiVersion(info);
        } catch (e) {
          return e;
        }
      })();
      expect(err, info).toBeInstanceOf(IdcliError);
      expect((err as IdcliError).code).toBe('KUBE_EXEC_INFO_INVALID');
      expect((err as IdcliError).exitCode).toBe(2);
    }
  });
});

describe('execCredential', () => {
  it('writes the object of the version asked for, the expiry in RFC 3339 whole seconds', () => {
    const at = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
    for (const version of ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const) {
      const text = execCredential(version, 'tok', at);
      expect(text.endsWith('\n')).toBe(true);
      expect(JSON.parse(text)).toEqual({
        kind: 'ExecCredential',
        apiVersion: version,
        status: { token: 'tok', expirationTimestamp: '2030-01-02T03:04:05Z' },
      });
    }
  });

  it('leaves the expiry out when it is unknown', () => {
    expect(JSON.parse(execCredential('client.authentication.k8s.io/v1', 'tok', undefined)).status).toEqual({
      token: 'tok',
    });
  });
});
