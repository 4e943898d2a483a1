// Registered clients, user accounts and single sign-on sessions.
import { randomUUID } from 'node:crypto';
import { randomToken } from './tokens.js';
import type { RegisteredClient, User } from './types.js';

export interface StoredUser extends User {
  sub: string;
}

export interface SsoSession {
  email: string;
  authTime: number; // ms, by the emulator clock
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). The client name travels as one.
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:(\d+))?([/?].*)?$/;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function isScopeToken(value: string): boolean {
  return SCOPE_TOKEN.test(value);
}

interface LoopbackParts {
  host: string;
  port: string | undefined;
  rest: string;
}

function loopbackParts(url: string): LoopbackParts | null {
  const m = LOOPBACK.exec(url);
  if (!m) return null;
  return { host: m[1] as string, port: m[3], rest: m[4] ?? '' };
}

/**
 * RFC 6749 §3.1.2.3 asks for a simple string comparison; RFC 8252 §7.3 makes one exception for native apps:
 * on a loopback IP redirect the port is chosen at run time, so any port is accepted when the rest is identical.
 */
export function redirectUriMatches(client: RegisteredClient, redirectUri: string): boolean {
  if (redirectUri === client.callbackUrl) return true;
  if (!client.loopbackAnyPort) return false;
  const want = loopbackParts(client.callbackUrl);
  const got = loopbackParts(redirectUri);
  if (!want || !got || got.port === undefined) return false;
  // A real port: port 0 would mean the client forgot to send the one it actually bound.
  if (!/^[1-9]\d{0,4}$/.test(got.port) || Number(got.port) > 65535) return false;
  return want.host === got.host && want.rest === got.rest;
}

export class Directory {
  readonly clients = new Map<string, RegisteredClient>();
  private readonly users = new Map<string, StoredUser>();
  private readonly sessions = new Map<string, SsoSession>();

  registerClient(c: { name: string; callbackUrl: string; loopbackAnyPort?: boolean; id?: string }): RegisteredClient {
    const id = c.id ?? randomUUID();
    if (!isUuid(id)) throw new Error('client id must be a UUID');
    if (!isScopeToken(c.name)) throw new Error('client name must be a valid scope token (RFC 6749 §3.3)');
    let parsed: URL;
    try {
      parsed = new URL(c.callbackUrl);
    } catch {
      throw new Error('callbackUrl must be an absolute URL');
    }
    // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment component.
    if (parsed.hash !== '' || c.callbackUrl.includes('#')) throw new Error('callbackUrl must not have a fragment');
    const loopbackAnyPort = c.loopbackAnyPort ?? false;
    if (loopbackAnyPort && !loopbackParts(c.callbackUrl)) {
      throw new Error('loopbackAnyPort needs an http://127.0.0.1, http://[::1] or http://localhost callback');
    }
    const client: RegisteredClient = {
      name: c.name,
      id,
      secret: randomToken(24),
      callbackUrl: c.callbackUrl,
      loopbackAnyPort,
    };
    this.clients.set(id.toLowerCase(), client);
    return client;
  }

  client(id: string): RegisteredClient | undefined {
    return this.clients.get(id.toLowerCase());
  }

  addUser(u: User): StoredUser {
    const stored: StoredUser = { email: u.email, password: u.password, name: u.name, sub: randomUUID() };
    this.users.set(u.email.toLowerCase(), stored);
    return stored;
  }

  user(email: string): StoredUser | undefined {
    return this.users.get(email.toLowerCase());
  }

  authenticate(email: string, password: string): StoredUser | null {
    const user = this.user(email);
    return user && user.password === password ? user : null;
  }

  openSession(email: string, now: number): string {
    const id = randomToken();
    this.sessions.set(id, { email, authTime: now });
    return id;
  }

  session(id: string | undefined): SsoSession | undefined {
    return id === undefined ? undefined : this.sessions.get(id);
  }
}
