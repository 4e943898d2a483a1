/**
 * What a test file may change in its process and must put back: the handles it opens (servers, sockets, pipes,
 * children), listeners of the process's signals and errors, process.env, the working directory and the umask.
 * process-hygiene.ts compares them before and after each file.
 */

/** Handles that a file opens and must close: servers, sockets, pipes, child processes, watchers. */
const HANDLES = new Set([
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
  listeners: number[];
  env: Record<string, string | undefined>;
  cwd: string;
  umask: number;
}

function handles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo())
    if (HANDLES.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

export function snapshot(): Snapshot {
  return {
    handles: handles(),
    listeners: EVENTS.map((e) => process.listenerCount(e)),
    env: { ...process.env },
    cwd: process.cwd(),
    umask: process.umask(),
  };
}

/** The handles open now beyond those of `before`, as "TCPServerWrap ×2". */
function extraHandles(before: Map<string, number>): string[] {
  return [...handles()]
    .filter(([name, n]) => n > (before.get(name) ?? 0))
    .map(([name, n]) => `${name} ×${n - (before.get(name) ?? 0)}`);
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
  return found;
}

/**
 * What differs now from `before`, one phrase each. A handle whose close was asked for may take a moment to go (a
 * socket's peer, a child's exit): handles are waited for until `deadlineMs` has passed.
 */
export async function leftovers(before: Snapshot, deadlineMs: number): Promise<string[]> {
  const end = Date.now() + deadlineMs;
  let open = extraHandles(before.handles);
  while (open.length > 0 && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    open = extraHandles(before.handles);
  }
  return [...changes(before), ...(open.length > 0 ? [`still open: ${open.join(', ')}`] : [])];
}
