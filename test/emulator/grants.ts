// Authorization codes and token families: who got what, what is spent, what is revoked.
import type { StoredUser } from './directory.js';
import { verifierMatches } from './pkce.js';
import { randomToken, signJwt } from './tokens.js';
import type { TokenResponse } from './types.js';

export const CODE_TTL_MS = 10 * 60 * 1000; // service contract: a code is valid for 10 minutes

export interface GrantConfig {
  issuer: () => string;
  now: () => number;
  accessTokenTtl: number;
  issueRefreshTokens: boolean;
  refreshTokenOnRefresh: boolean;
  jwtSecret: Buffer;
  remember: (secret: string) => void;
}

export type GrantResult =
  { ok: true; body: TokenResponse } | { ok: false; error: string; description: string; reuse?: boolean };

export type AccessCheck = 'ok' | 'unknown' | 'expired' | 'revoked';

interface Family {
  clientId: string;
  user: StoredUser;
  scope: string;
  nonce: string | undefined;
  authTime: number;
  /** The challenge the next refresh must prove (Serial PKCE); null when the previous request sent none. */
  nextChallenge: string | null;
  revoked: boolean;
}

/** What the authorize step asked for, plus the code's own life. */
interface CodeRecord extends CodeRequest {
  issuedAt: number;
  used: boolean;
  revoked: boolean;
  family: Family | null;
}

interface AccessRecord {
  family: Family;
  expiresAt: number;
  forcedExpired: boolean;
}

interface RefreshRecord {
  family: Family;
  spent: boolean;
}

export interface CodeRequest {
  clientId: string;
  redirectUri: string;
  challenge: string;
  user: StoredUser;
  scope: string;
  nonce: string | undefined;
  authTime: number;
}

const fail = (error: string, description: string, reuse?: boolean): GrantResult =>
  reuse ? { ok: false, error, description, reuse } : { ok: false, error, description };

export class Grants {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly access = new Map<string, AccessRecord>();
  private readonly refreshTokens = new Map<string, RefreshRecord>();
  private readonly families: Family[] = [];

  constructor(private readonly cfg: GrantConfig) {}

  issueCode(r: CodeRequest): string {
    const code = randomToken();
    this.codes.set(code, { ...r, issuedAt: this.cfg.now(), used: false, revoked: false, family: null });
    this.cfg.remember(code);
    return code;
  }

  exchangeCode(p: {
    code: string;
    clientId: string;
    redirectUri: string;
    verifier: string;
    nextChallenge: string | null;
  }): GrantResult {
    const record = this.codes.get(p.code);
    if (!record) return fail('invalid_grant', 'The authorization code is unknown.');
    if (record.used) {
      // RFC 6749 §4.1.2: a code presented twice revokes everything already issued from it.
      record.revoked = true;
      if (record.family) record.family.revoked = true;
      return fail('invalid_grant', 'The authorization code was already used; its tokens are revoked.', true);
    }
    if (record.revoked) return fail('invalid_grant', 'The authorization code was revoked.');
    if (this.cfg.now() >= record.issuedAt + CODE_TTL_MS)
      return fail('invalid_grant', 'The authorization code expired.');
    // RFC 6749 §4.1.3: a public client's code must have been issued to the client_id in the request,
    // and redirect_uri must be identical to the one in the authorization request.
    if (record.clientId.toLowerCase() !== p.clientId.toLowerCase()) {
      return fail('invalid_grant', 'The authorization code was issued to another client.');
    }
    if (record.redirectUri !== p.redirectUri) {
      return fail('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
    }
    if (!verifierMatches(p.verifier, record.challenge)) {
      return fail('invalid_grant', 'code_verifier does not match the code_challenge (RFC 7636 §4.6).');
    }
    record.used = true;
    const family: Family = {
      clientId: record.clientId,
      user: record.user,
      scope: record.scope,
      nonce: record.nonce,
      authTime: record.authTime,
      nextChallenge: p.nextChallenge,
      revoked: false,
    };
    record.family = family;
    this.families.push(family);
    return { ok: true, body: this.issueTokens(family, this.cfg.issueRefreshTokens, family.scope) };
  }

  refresh(p: {
    refreshToken: string;
    clientId: string;
    verifier: string;
    nextChallenge: string;
    scope: string | undefined;
  }): GrantResult {
    const record = this.refreshTokens.get(p.refreshToken);
    if (!record) return fail('invalid_grant', 'The refresh token is unknown.');
    const family = record.family;
    if (record.spent) {
      // A one-time token presented twice means two parties hold it: revoke the whole family
      // (OAuth 2.0 Security BCP, RFC 9700 §4.14.2, refresh token rotation).
      family.revoked = true;
      return fail('invalid_grant', 'The refresh token was already used; the session is revoked.', true);
    }
    if (family.revoked) return fail('invalid_grant', 'The refresh token was revoked.');
    if (family.clientId.toLowerCase() !== p.clientId.toLowerCase()) {
      return fail('invalid_grant', 'The refresh token was issued to another client.');
    }
    if (family.nextChallenge === null) {
      return fail('invalid_grant', 'The previous token request sent no code_challenge, so no refresh can be proven.');
    }
    if (!verifierMatches(p.verifier, family.nextChallenge)) {
      return fail('invalid_grant', 'code_verifier does not match the challenge of the previous token request.');
    }
    let scope = family.scope;
    if (p.scope !== undefined) {
      // RFC 6749 §6: a refresh may narrow the scope, never widen it.
      const granted = new Set(family.scope.split(' '));
      if (!p.scope.split(' ').every((s) => granted.has(s))) {
        return fail('invalid_scope', 'The requested scope exceeds the scope originally granted.');
      }
      scope = p.scope;
    }
    record.spent = true;
    family.nextChallenge = p.nextChallenge;
    const withRefresh = this.cfg.issueRefreshTokens && this.cfg.refreshTokenOnRefresh;
    return { ok: true, body: this.issueTokens(family, withRefresh, scope) };
  }

  /** Tokens for a signed-in state without going through the browser and the code. */
  mint(o: { clientId: string; user: StoredUser; scope: string; nextChallenge: string | null }): TokenResponse {
    const family: Family = {
      clientId: o.clientId,
      user: o.user,
      scope: o.scope,
      nonce: undefined,
      authTime: this.cfg.now(),
      nextChallenge: o.nextChallenge,
      revoked: false,
    };
    this.families.push(family);
    return this.issueTokens(family, this.cfg.issueRefreshTokens, o.scope);
  }

  checkAccess(token: string): AccessCheck {
    const record = this.access.get(token);
    if (!record) return 'unknown';
    if (record.family.revoked) return 'revoked';
    if (record.forcedExpired || this.cfg.now() >= record.expiresAt) return 'expired';
    return 'ok';
  }

  expireAccessTokens(): void {
    for (const record of this.access.values()) record.forcedExpired = true;
  }

  revokeAll(): void {
    for (const family of this.families) family.revoked = true;
    for (const code of this.codes.values()) code.revoked = true;
  }

  private issueTokens(family: Family, withRefresh: boolean, scope: string): TokenResponse {
    const now = this.cfg.now();
    const ttl = this.cfg.accessTokenTtl;
    const accessToken = randomToken();
    this.access.set(accessToken, { family, expiresAt: now + ttl * 1000, forcedExpired: false });
    const iat = Math.floor(now / 1000);
    const claims: Record<string, unknown> = {
      iss: this.cfg.issuer(),
      aud: family.clientId,
      sub: family.user.sub,
      name: family.user.name,
      email: family.user.email,
      iat,
      exp: iat + ttl,
      auth_time: Math.floor(family.authTime / 1000),
    };
    if (family.nonce !== undefined) claims['nonce'] = family.nonce;
    const idToken = signJwt(claims, this.cfg.jwtSecret);
    const body: TokenResponse = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ttl,
      id_token: idToken,
      scope,
    };
    this.cfg.remember(accessToken);
    this.cfg.remember(idToken);
    if (withRefresh) {
      const refreshToken = randomToken();
      this.refreshTokens.set(refreshToken, { family, spent: false });
      this.cfg.remember(refreshToken);
      // Keep the RFC 6749 §5.1 member order readable: refresh_token right after expires_in.
      return {
        access_token: body.access_token,
        token_type: body.token_type,
        expires_in: body.expires_in,
        refresh_token: refreshToken,
        id_token: body.id_token,
        scope: body.scope,
      };
    }
    return body;
  }
}
