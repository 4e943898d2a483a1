#!/usr/bin/env node
// A "browser" for tests: idcli runs `$BROWSER <url>` and this walks the emulator's sign-in over plain HTTP,
// following the real redirects and submitting the real forms, then delivers the callback to idcli's
// loopback listener. Configured through the environment:
//   HTTP_BROWSER_ACTION   login (default) | cancel | signup | none | wrong-state | remote
//                         (remote: signs in like login, as a browser on another machine would, where the callback
//                         address does not load: it delivers nothing and writes that address to HTTP_BROWSER_LANDED)
//   HTTP_BROWSER_EMAIL    / HTTP_BROWSER_PASSWORD (default: the emulator's default user), HTTP_BROWSER_NAME (sign-up)
//   HTTP_BROWSER_COOKIES  JSON file keeping cookies across runs (the SSO session)
//   HTTP_BROWSER_LOG      diagnostics file; query values are redacted. Nothing is ever written to stdout/stderr,
//                         which idcli may share with the test.
import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const env = process.env;
const ACTIONS = new Set(['login', 'cancel', 'signup', 'none', 'wrong-state', 'remote']);
const DEFAULT_EMAIL = 'alice@example.com';
const DEFAULT_PASSWORD = 'correct-horse-battery';
const FETCH_TIMEOUT_MS = 10_000;
const OVERALL_TIMEOUT_MS = 25_000;
const MAX_HOPS = 20;

function log(line) {
  if (!env.HTTP_BROWSER_LOG) return;
  try {
    appendFileSync(env.HTTP_BROWSER_LOG, `${new Date().toISOString()} ${line}\n`);
  } catch {
    // Diagnostics must never break the walk.
  }
}

/** Codes, states and challenges ride in query strings: log only the names. */
function redact(url) {
  try {
    const u = new URL(url);
    const names = [...u.searchParams.keys()];
    const query = names.length > 0 ? `?${names.map((n) => `${encodeURIComponent(n)}=***`).join('&')}` : '';
    return `${u.origin}${u.pathname}${query}`;
  } catch {
    return '<unparseable URL>';
  }
}

// ---- cookies (only for the identity service's origin, like a browser's same-origin jar) ----

function loadJar() {
  if (!env.HTTP_BROWSER_COOKIES) return {};
  try {
    const parsed = JSON.parse(readFileSync(env.HTTP_BROWSER_COOKIES, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

function saveJar(jar) {
  if (!env.HTTP_BROWSER_COOKIES) return;
  writeFileSync(env.HTTP_BROWSER_COOKIES, `${JSON.stringify(jar, null, 2)}\n`, { mode: 0o600 });
}

function storeCookies(jar, origin, response) {
  const setCookies = typeof response.headers.getSetCookie === 'function' ? response.headers.getSetCookie() : [];
  if (setCookies.length === 0) return;
  const cookies = { ...(jar[origin] ?? {}) };
  for (const line of setCookies) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    const expired = attrs.some((a) => /^\s*max-age\s*=\s*(0|-\d+)\s*$/i.test(a));
    if (expired) delete cookies[name];
    else cookies[name] = pair.slice(eq + 1).trim();
  }
  jar[origin] = cookies;
  saveJar(jar);
}

function cookieHeader(jar, origin) {
  const cookies = jar[origin] ?? {};
  const pairs = Object.entries(cookies).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? pairs.join('; ') : undefined;
}

// ---- HTML forms ----

function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e) => {
    const k = e.toLowerCase();
    if (k.startsWith('#x')) return String.fromCodePoint(Number.parseInt(k.slice(2), 16));
    if (k.startsWith('#')) return String.fromCodePoint(Number.parseInt(k.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[k];
  });
}

function attributes(text) {
  const out = {};
  for (const m of text.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    out[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

function parseForm(html) {
  const m = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!m) return null;
  const form = attributes(m[1]);
  const inputs = [...m[2].matchAll(/<input\b([^>]*)>/gi)].map((x) => attributes(x[1])).filter((a) => a.name);
  const buttons = [...m[2].matchAll(/<button\b([^>]*)>/gi)].map((x) => attributes(x[1]));
  return { action: form.action ?? '', method: (form.method ?? 'get').toLowerCase(), inputs, buttons };
}

/** Fills the form the way a user would for the requested action; returns the fields to submit. */
function fill(form, action) {
  const isSignUp = form.inputs.some((i) => i.name === 'name');
  const fields = new URLSearchParams();
  for (const input of form.inputs) {
    const type = (input.type ?? 'text').toLowerCase();
    if (input.name === 'email') fields.append('email', env.HTTP_BROWSER_EMAIL || input.value || DEFAULT_EMAIL);
    else if (type === 'password') fields.append(input.name, env.HTTP_BROWSER_PASSWORD ?? DEFAULT_PASSWORD);
    else if (input.name === 'name') fields.append('name', env.HTTP_BROWSER_NAME || input.value || 'Test User');
    else if (type !== 'submit' && type !== 'button') fields.append(input.name, input.value ?? '');
  }
  const wanted = action === 'cancel' ? 'cancel' : isSignUp ? 'signup' : 'login';
  if (action === 'signup' && !isSignUp) log('sign-up requested but the sign-in form was shown; signing in');
  const button = form.buttons.find((b) => b.value === wanted);
  if (!button) return null;
  if (button.name) fields.append(button.name, button.value ?? '');
  return fields;
}

// ---- the walk ----

async function request(jar, url, init = {}) {
  const origin = new URL(url).origin;
  const headers = { ...(init.headers ?? {}) };
  const cookie = cookieHeader(jar, origin);
  if (cookie) headers.cookie = cookie;
  const response = await fetch(url, {
    ...init,
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  storeCookies(jar, origin, response);
  log(`${init.method ?? 'GET'} ${redact(url)} -> ${response.status}`);
  return response;
}

/** The callback is idcli's own listener: one plain GET, cookies of the identity service never go there. */
async function deliver(url) {
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    await response.arrayBuffer().catch(() => undefined);
    log(`GET ${redact(url)} -> ${response.status} (callback)`);
    // A browser follows the 303 to the page that shows the outcome; idcli waits a moment for it before closing.
    const location = response.status === 303 ? response.headers.get('location') : null;
    if (location) await showDone(new URL(location, url).href);
    return true;
  } catch (err) {
    log(`GET ${redact(url)} failed (callback): ${err?.cause?.code ?? err?.name ?? 'error'}`);
    return false;
  }
}

/**
 * The done page, answered once idcli knows the outcome. Nothing is written after it (no log line): idcli may have
 * ended, and the test removed this browser's directory, by the time the answer is read.
 */
async function showDone(url) {
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    await response.arrayBuffer();
  } catch {
    // Failing to get it is not the callback's failure.
  }
}

async function callback(url, action) {
  if (action === 'remote') {
    // Written whole under a temporary name, then renamed: a reader never sees half an address.
    const landed = env.HTTP_BROWSER_LANDED;
    if (!landed) {
      log('remote: HTTP_BROWSER_LANDED is not set');
      return 2;
    }
    writeFileSync(`${landed}.tmp`, url, { mode: 0o600 });
    renameSync(`${landed}.tmp`, landed);
    log(`landed on ${redact(url)} (not delivered)`);
    return 0;
  }
  if (action === 'wrong-state') {
    const forged = new URL(url);
    const state = forged.searchParams.get('state');
    forged.searchParams.set('state', state === null ? 'forged-state' : `${state}-forged`);
    await deliver(forged.href);
  }
  return (await deliver(url)) ? 0 : 1;
}

async function main() {
  const start = process.argv[2];
  const action = env.HTTP_BROWSER_ACTION || 'login';
  if (!start) {
    log('no URL given');
    return 2;
  }
  if (!ACTIONS.has(action)) {
    log(`unknown HTTP_BROWSER_ACTION ${action}`);
    return 2;
  }
  log(`open ${redact(start)} (action ${action})`);
  if (action === 'none') return 0;

  const jar = loadJar();
  const origin = new URL(start).origin;
  let url = start;
  let response = await request(jar, url);
  let submitted = false;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get('location');
      await response.arrayBuffer();
      if (!location) {
        log(`redirect without Location at ${redact(url)}`);
        return 1;
      }
      const next = new URL(location, url).href;
      // Leaving the identity service's origin means we reached the application's redirect_uri.
      if (new URL(next).origin !== origin) return callback(next, action);
      url = next;
      response = await request(jar, url);
      continue;
    }
    const body = await response.text();
    const form = response.status === 200 ? parseForm(body) : null;
    if (!form) {
      log(`stopped: ${response.status} without a form at ${redact(url)}`);
      return 1;
    }
    if (submitted) {
      log(`the form came back after submitting it (wrong credentials?) at ${redact(url)}`);
      return 1;
    }
    const fields = fill(form, action);
    if (!fields) {
      log('the form has no usable submit button');
      return 1;
    }
    submitted = true;
    const target = new URL(form.action || url, url).href;
    if (form.method === 'post') {
      response = await request(jar, target, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: fields.toString(),
      });
    } else {
      const u = new URL(target);
      u.search = fields.toString();
      response = await request(jar, u.href);
    }
    url = target;
  }
  log('too many redirects');
  return 1;
}

// The CLI never waits for its browser, but a test run must not keep a stray process around either.
setTimeout(() => {
  log('gave up: overall timeout');
  process.exit(1);
}, OVERALL_TIMEOUT_MS).unref();

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`failed: ${err?.cause?.code ?? err?.name ?? 'error'}`);
    process.exit(1);
  },
);
