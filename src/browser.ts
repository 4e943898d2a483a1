/**
 * Opens the sign-in page: `$BROWSER` as Debian and xdg-open read it (docs/cli.md, "Environment variables"), never
 * through a shell, else the platform opener. A failed launch is never fatal: the URL is printed already.
 */
import { spawn } from 'node:child_process';
import { clip } from './printable.js';
import { errReason } from './shape.js';

export interface BrowserOptions {
  env: Record<string, string | undefined>;
  /** Told about a launch that failed, e.g. "could not start $BROWSER (ENOENT)". */
  warn: (msg: string) => void;
}

/**
 * Why no browser should be started here: over SSH it would open on the remote machine, and Linux without a display
 * has none (WSL opens Windows'). `$BROWSER` overrides both: it names a browser the user knows works here.
 */
export function whyNoBrowser(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (browserCommands(env.BROWSER).length > 0) return undefined;
  if (env.SSH_CONNECTION || env.SSH_TTY) return 'this is an SSH session';
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY && !env.WSL_DISTRO_NAME)
    return 'there is no display (DISPLAY and WAYLAND_DISPLAY are not set)';
  return undefined;
}

/**
 * The commands of `$BROWSER` for `url`, each as the program and its arguments: `%s` replaced by the URL, `%%` by
 * `%`, the URL appended when no `%s` is there. Empty entries (`a::b`, a trailing `:`) are skipped.
 */
export function browserCommands(value: string | undefined, url = '%s'): string[][] {
  const commands: string[][] = [];
  for (const entry of (value ?? '').split(':')) {
    const words = entry.split(/\s+/).filter((w) => w !== '');
    if (words.length === 0) continue;
    let placed = false;
    const argv = words.map((w) =>
      w.replace(/%([s%])/g, (_, c: string) => {
        if (c === '%') return '%';
        placed = true;
        return url;
      }),
    );
    if (!placed) argv.push(url);
    commands.push(argv);
  }
  return commands;
}

export async function openBrowser(url: string, opts: BrowserOptions): Promise<void> {
  const commands = browserCommands(opts.env.BROWSER, url);
  if (commands.length > 0) return launchFirst(commands, opts);
  try {
    // Imported here: it is sizeable and only `login` needs it.
    const { default: open } = await import('open');
    await open(url, { wait: false });
  } catch (err) {
    opts.warn(`could not open a browser (${errReason(err)}); open the URL above yourself`);
  }
}

/** Starts the commands in turn until one runs (the next when one cannot start or fails, as xdg-open does). */
async function launchFirst(commands: string[][], opts: BrowserOptions): Promise<void> {
  const failures: string[] = [];
  const giveUp = (): void => {
    if (commands.length === 1) {
      const only = failures[0]!;
      opts.warn(
        only.startsWith('exited')
          ? `$BROWSER ${only}; open the URL above yourself if no page appeared`
          : `could not start $BROWSER (${only}); open the URL above yourself`,
      );
    } else {
      opts.warn(`no command of $BROWSER opened the page (${failures.join('; ')}); open the URL above yourself`);
    }
  };
  const tryFrom = async (i: number): Promise<void> => {
    if (i === commands.length) return giveUp();
    const argv = commands[i]!;
    const failed = (why: string): void => {
      failures.push(commands.length === 1 ? why : `${clip(argv[0]!, 60)}: ${why}`);
    };
    const started = await launch(argv, opts.env, (code) => {
      // Only a failure while idcli still runs is seen here; the next command is then tried in its place.
      failed(`exited with status ${code}`);
      void tryFrom(i + 1);
    });
    if (started === true) return;
    failed(started);
    return tryFrom(i + 1);
  };
  return tryFrom(0);
}

/** Starts `argv` detached, not waited for: true once it runs, else why not (ENOENT); `onFailure` hears a bad exit. */
function launch(
  argv: string[],
  env: Record<string, string | undefined>,
  onFailure: (code: number) => void,
): Promise<true | string> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(argv[0]!, argv.slice(1), {
        shell: false,
        detached: true,
        stdio: 'ignore',
        env,
      });
    } catch (err) {
      return resolve(errReason(err));
    }
    child.once('error', (err) => resolve(errReason(err)));
    child.once('spawn', () => {
      child.once('exit', (code) => {
        if (code !== null && code !== 0) onFailure(code);
      });
      child.unref();
      resolve(true);
    });
  });
}
