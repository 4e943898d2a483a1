/**
 * A git smart-HTTP server on loopback: git's own git-http-backend run as CGI for each request, behind a check of the
 * Basic password that only lets a token in that `accepts` takes (401 with `WWW-Authenticate: Basic` otherwise).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { listenLoopback } from './listen.js';

export const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitServer {
  url: string;
  /** The passwords of the requests that carried one, in order. */
  passwords: string[];
  close(): Promise<void>;
}

/** git with a config of its own: no system file, `home` as HOME, a fixed identity, no prompt. */
export function gitEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };
}

/** A bare repository `name` under `root` with one commit holding README. */
export function makeRepo(root: string, name: string, home: string): void {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...gitEnv(home) };
  const work = join(root, `${name}-work`);
  execFileSync('git', ['init', '-q', '-b', 'main', work], { env });
  execFileSync('sh', ['-c', 'echo hello > README && git add README && git commit -q -m first'], { cwd: work, env });
  execFileSync('git', ['clone', '-q', '--bare', work, join(root, name)], { env });
}

export async function startGitServer(
  root: string,
  home: string,
  accepts: (password: string) => Promise<boolean>,
): Promise<GitServer> {
  const passwords: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const password = basicPassword(req.headers.authorization);
      if (password !== undefined) passwords.push(password);
      if (password === undefined || !(await accepts(password))) {
        req.resume();
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
        return;
      }
      cgi(req, res, root, home);
    })().catch(() => res.destroy());
  });
  const listening = await listenLoopback(server);
  return { url: `http://127.0.0.1:${listening.port}`, passwords, close: listening.close };
}

function basicPassword(header: string | undefined): string | undefined {
  const m = /^Basic (\S+)$/i.exec(header ?? '');
  if (!m) return undefined;
  const [user, ...rest] = Buffer.from(m[1]!, 'base64').toString().split(':');
  return user === 'oauth2' ? rest.join(':') : undefined;
}

/** RFC 3875: the request as environment and stdin, the answer as CGI headers then the body. */
function cgi(req: IncomingMessage, res: ServerResponse, root: string, home: string): void {
  const url = new URL(req.url ?? '/', 'http://git.test');
  const header = (name: string) => req.headers[name] as string | undefined;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...gitEnv(home),
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: decodeURIComponent(url.pathname),
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: url.search.slice(1),
    REMOTE_USER: 'oauth2',
    REMOTE_ADDR: '127.0.0.1',
    GATEWAY_INTERFACE: 'CGI/1.1',
  };
  for (const [name, variable] of [
    ['content-type', 'CONTENT_TYPE'],
    ['content-length', 'CONTENT_LENGTH'],
    ['content-encoding', 'HTTP_CONTENT_ENCODING'],
    ['git-protocol', 'HTTP_GIT_PROTOCOL'],
  ] as const) {
    const value = header(name);
    if (value !== undefined) env[variable] = value;
  }
  const child = spawn(HTTP_BACKEND, [], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let started = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (started) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) return;
    started = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString().split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  child.stdout.on('end', () => res.end());
  child.on('error', () => res.destroy());
}
