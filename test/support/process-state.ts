/**
 * What a test file may change in its process and must put back: the handles it opens (servers, sockets, pipes,
 * children), the child processes still running, listeners of the process's signals and errors, process.env, the
 * working directory, the umask and the exit code. process-hygiene.ts compares them before and after each file.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Handles that a file opens and must close: servers, sockets, pipes, child processes, watchers, and timers that keep
 * the process alive (one left would fire in a later file: a kill for a pid since reused, a check of a closed server).
 */
const HANDLES = new Set([
  'Timeout',
  'TCPServerWrap',
  'TCPSocketWrap',
  'PipeServerWrap',
  'PipeWrap',
  'ProcessWrap',
  'UDPWrap',
  'FSEventWrap',
  'StatWatcher',
  'TTYWrap',
]);
/** Process events whose listeners change how the process ends, or what it does with an error or a signal. */
const EVENTS = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGQUIT',
  'SIGPIPE',
  'SIGUSR1',
  'SIGUSR2',
  'SIGWINCH',
  'uncaughtException',
  'unhandledRejection',
  'beforeExit',
] as const;
export interface Snapshot {
  handles: Map<string, number>;
  children: Set<number>;
  listeners: number[];
  env: Record<string, string | undefined>;
  cwd: string;
  umask: number;
  exitCode: typeof process.exitCode;
}

function handles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo())
    if (HANDLES.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/**
 * The pids of this process's children that still run, by /proc (Linux; none elsewhere). The handles miss a child
 * that was unref'd, as a browser is started (src/browser.ts): it runs on unseen, into the files after.
 */
function children(): Set<number> {
  const found = new Set<number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return found;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so the fields are read after its last ")".
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(ppid) === process.pid && state !== 'Z') found.add(Number(pid));
  }
  return found;
}

/** A child's command line, to name it. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120);
  } catch {
    return '?';
  }
}

export function snapshot(): Snapshot {
  return {
    handles: handles(),
    children: children(),
    listeners: EVENTS.map((e) => process.listenerCount(e)),
    env: { ...process.env },
    cwd: process.cwd(),
    umask: process.umask(),
    exitCode: process.exitCode,
  };
}

/** The handles open and children running now beyond those of `before`, as "TCPServerWrap ×2". */
function extra(before: Snapshot): string[] {
  return [
    ...[...handles()]
      .filter(([name, n]) => n > (before.handles.get(name) ?? 0))
      .map(([name, n]) => `${name} ×${n - (before.handles.get(name) ?? 0)}`),
    ...[...children()].filter((pid) => !before.children.has(pid)).map((pid) => `child ${pid} (${commandLine(pid)})`),
  ];
}

function changes(before: Snapshot): string[] {
  const found: string[] = [];
  EVENTS.forEach((event, i) => {
    const n = process.listenerCount(event);
    if (n !== before.listeners[i]) found.push(`${event} listeners ${before.listeners[i]} → ${n}`);
  });
  const keys = new Set([...Object.keys(before.env), ...Object.keys(process.env)]);
  for (const key of keys) if (before.env[key] !== process.env[key]) found.push(`process.env.${key} changed`);
  if (process.cwd() !== before.cwd) found.push(`the working directory is ${process.cwd()}, was ${before.cwd}`);
  const umask = process.umask();
  if (umask !== before.umask) found.push(`umask ${umask.toString(8)}, was ${before.umask.toString(8)}`);
  // Set, it would become the exit status of a process that ran every later file too.
  if (process.exitCode !== before.exitCode)
    found.push(`process.exitCode ${String(process.exitCode)}, was ${String(before.exitCode)}`);
  return found;
}

/**
 * What differs now from `before`, one phrase each. A handle whose close was asked for may take a moment to go (a
 * socket's peer, a child's exit): handles and children are waited for until `deadlineMs` has passed.
 */
export async function leftovers(before: Snapshot, deadlineMs: number): Promise<string[]> {
  const end = Date.now() + deadlineMs;
  let open = extra(before);
  while (open.length > 0 && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    open = extra(before);
  }
  return [...changes(before), ...(open.length > 0 ? [`still open: ${open.join(', ')}`] : [])];
}
