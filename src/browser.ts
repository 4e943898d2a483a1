/**
 * Opens the sign-in page. `$BROWSER` wins (docs/cli.md, "Environment variables") and is run without a shell, with the URL as its one
 * argument, so nothing in the URL can be interpreted as shell syntax; otherwise the platform opener through the
 * `open` package. A failed launch is never fatal: the caller has already printed the URL and keeps waiting.
 */
import { spawn } from 'node:child_process';

export interface BrowserOptions {
  env: Record<string, string | undefined>;
  /** Told about a launch that failed, e.g. "could not start $BROWSER (ENOENT)". */
  warn: (msg: string) => void;
}

/**
 * Why no browser should be started here, if so: over SSH the browser would open on the remote machine (or not at
 * all), and a Linux session without a display has none to show; the opener would then start a text-mode browser
 * in the background or fail. `$BROWSER` overrides both: it names a browser the user knows works here. WSL opens
 * the Windows browser without a display.
 */
export function whyNoBrowser(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (env.BROWSER?.trim()) return undefined;
  if (env.SSH_CONNECTION || env.SSH_TTY) return 'this is an SSH session';
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY && !env.WSL_DISTRO_NAME)
    return 'there is no display (DISPLAY and WAYLAND_DISPLAY are not set)';
  return undefined;
}

export async function openBrowser(url: string, opts: BrowserOptions): Promise<void> {
  const command = opts.env.BROWSER?.trim();
  if (command) return launch(command, url, opts);
  try {
    // Imported here: it is sizeable and only `login` needs it.
    const { default: open } = await import('open');
    await open(url, { wait: false });
  } catch (err) {
    opts.warn(`could not open a browser (${reason(err)}); open the URL above yourself`);
  }
}

/** Resolves once the program started (or failed to); it keeps running detached from idcli. */
function launch(command: string, url: string, opts: BrowserOptions): Promise<void> {
  return new Promise((resolve) => {
    const failed = (err: unknown): void => {
      opts.warn(`could not start $BROWSER (${reason(err)}); open the URL above yourself`);
      resolve();
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, [url], {
        shell: false,
        detached: true,
        stdio: 'ignore',
        env: opts.env as NodeJS.ProcessEnv,
      });
    } catch (err) {
      return failed(err);
    }
    child.once('error', failed);
    child.once('spawn', () => {
      // Only a quick failure is worth reporting; a browser that runs for minutes must not hold idcli open.
      child.once('exit', (code) => {
        if (code !== null && code !== 0)
          opts.warn(`$BROWSER exited with status ${code}; open the URL above yourself if no page appeared`);
      });
      child.unref();
      resolve();
    });
  });
}

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e?.code ?? (e?.message ? e.message.split('\n')[0]! : 'unknown error');
}
