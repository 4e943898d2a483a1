/**
 * Shared set-up of the credential and exec tests: a stored sign-in with tokens the emulator issued, and the
 * emulator's own word on whether an access token is still good, for the servers these tests stand up.
 */
import { createServer } from 'node:https';
import { createPkcePair } from '../../src/oauth/pkce.js';
import type { Emulator, TokenResponse } from '../emulator/index.js';
import { makePki } from '../emulator/pki.js';
import type { Harness } from './harness.js';
import { BIN, EXE } from './cli.js';
import { listenLoopback } from './listen.js';

/** The resource a bearer must open for a server of these tests to let a request in. */
export const PROBE = '/v1/probe';

/** A sign-in as login leaves it, its access token valid for `ttlSec` (below zero: expired), in the harness's store. */
export async function seedSignIn(h: Harness, ttlSec = 3600): Promise<TokenResponse> {
  h.emu.setCollection(PROBE, { type: 'offset', items: ['{"id":1}'] });
  const pair = createPkcePair();
  const t = h.emu.mintTokens({ nextChallenge: pair.challenge });
  const now = Date.now();
  await h.writeRecord({
    version: 1,
    accessToken: t.access_token,
    tokenType: 'Bearer',
    expiresAt: now + ttlSec * 1000,
    refreshToken: t.refresh_token,
    codeVerifier: pair.verifier,
    idToken: t.id_token,
    scope: t.scope,
    updatedAt: now,
    generation: 1,
  });
  return t;
}

/** Whether the emulator still takes `token` as an access token. */
export async function accepted(emu: Emulator, token: string): Promise<boolean> {
  const res = await fetch(`${emu.baseUrl}${PROBE}?pageSize=1`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status === 200;
}

/** The CLI as a program and its first arguments, for a tool that runs it without a shell (kubectl's exec block). */
export function cliArgv(): [string, ...string[]] {
  return EXE ? [EXE] : [process.execPath, BIN];
}

/** The refresh grants the emulator answered. */
export function refreshes(emu: Emulator): number {
  return emu.tokenEvents.filter((e) => e.grant === 'refresh_token').length;
}

export interface KubeApi {
  url: string;
  /** PEM file of the CA that signed its certificate, for the kubeconfig's `certificate-authority`. */
  caFile: string;
  /** The Authorization headers it saw, in order. */
  seen: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * A Kubernetes API server as far as `kubectl get --raw /api` goes, over HTTPS on loopback: it answers only a bearer
 * that is an ID token the emulator signed (as the API server's OIDC authenticator checks), 401 otherwise.
 */
export async function startKubeApi(h: Harness): Promise<KubeApi> {
  const pki = makePki(h.dir);
  const seen: (string | undefined)[] = [];
  const server = createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
    seen.push(req.headers.authorization);
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer === undefined || h.emu.verifyIdToken(bearer) === null) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"kind":"Status","code":401}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(KUBE_API_ANSWER);
  });
  const listening = await listenLoopback(server);
  return { url: `https://127.0.0.1:${listening.port}`, caFile: pki.caFile, seen, close: listening.close };
}

export const KUBE_API_ANSWER = '{"kind":"APIVersions","versions":["v1"]}';
