/**
 * Shared set-up of the credential and exec tests: a stored sign-in with tokens the emulator issued, and the
 * emulator's own word on whether an access token is still good, for the servers these tests stand up.
 */
import { createPkcePair } from '../../src/oauth/pkce.js';
import type { Emulator, TokenResponse } from '../emulator/index.js';
import type { Harness } from '../auth/harness.js';
import { BIN, EXE } from '../support/cli.js';

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
