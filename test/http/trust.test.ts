import { existsSync } from 'node:fs';
import * as tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { buildTrustStore } from '../../src/http/trust.js';

const body = (pem: string): string => pem.replace(/-----[A-Z ]+-----|\s+/g, '');

describe('the trust store', () => {
  // Debian's bundle carries most of Node's roots, wrapped otherwise: each CA is to be added once.
  it.runIf(existsSync('/etc/ssl/certs/ca-certificates.crt'))('holds each CA once, however each store wraps it', () => {
    const { anchors } = buildTrustStore({});
    const bodies = anchors.map((a) => body(a.pem));
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(anchors.filter((a) => a.source === 'node')).toHaveLength(tls.rootCertificates.length);
    expect(anchors.some((a) => a.source === 'system')).toBe(true);
    expect(anchors.length).toBeLessThan(tls.rootCertificates.length * 2);
  });
});
