/**
 * A stored sign-in as `idcli login` leaves it, made without a browser: tokens minted by the emulator for a fresh
 * PKCE pair, saved to the file store. `ttlSec` below zero gives an expired access token, so the next command
 * refreshes it (Serial PKCE: the stored verifier proves the challenge the emulator expects).
 */
import { createPkcePair } from '../../src/oauth/pkce.js';
import { FileStore } from '../../src/store/file-store.js';
import type { Emulator } from '../emulator/index.js';

export interface StoredSignIn {
  emu: Emulator;
  configDir: string;
  /** The base URL idcli is configured with (default the emulator's own; differs behind a TLS front). */
  baseUrl?: string;
  profile?: string;
  ttlSec: number;
}

export async function storeSignIn(o: StoredSignIn): Promise<void> {
  const pair = createPkcePair();
  const t = o.emu.mintTokens({ nextChallenge: pair.challenge });
  const now = Date.now();
  await new FileStore({ configDir: o.configDir }).write(
    { baseUrl: o.baseUrl ?? o.emu.baseUrl, clientId: o.emu.client.id, profile: o.profile ?? 'default' },
    {
      version: 1,
      refreshToken: t.refresh_token,
      codeVerifier: pair.verifier,
      accessToken: t.access_token,
      tokenType: 'Bearer',
      expiresAt: now + o.ttlSec * 1000,
      idToken: t.id_token,
      scope: t.scope,
      updatedAt: now,
      generation: 0,
    },
  );
}

/** A stored sign-in whose access token has expired, so the next command refreshes it. */
export function storeExpiredSignIn(o: Omit<StoredSignIn, 'ttlSec'>): Promise<void> {
  return storeSignIn({ ...o, ttlSec: -1 });
}
