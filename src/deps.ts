import type { Clock } from './clock.js';
import type { Logger } from './log.js';

/** Everything outside the program that the logic uses (streams, environment, clock, cancellation), built in cli.ts. */
export interface Deps {
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** A short, complete text for stdout, written at once (`token`, `--version`); streams of data use `stdout`. */
  print(text: string): void;
  log: Logger;
  now: () => number;
  /**
   * The timers of the rules about time (retries, deadlines, the sign-in's timeout), on the clock of now(); the
   * machine's when absent (clockOf).
   */
  clock?: Clock;
  /** When this run started (epoch ms, on now()'s clock): a token another run refreshed since then is used as it is. */
  startedAt: number;
  signal: AbortSignal;
  /** Runs `work` that must not be abandoned (a refresh): a stop signal lets it finish, then ends in `interrupted`. */
  mustFinish<T>(task: UnabandonableTask, work: () => Promise<T>): Promise<T>;
}

/** What a stop signal tells the user about work it cannot simply abandon. */
export interface UnabandonableTask {
  /** e.g. "the token refresh", what abandoning it costs ("the sign-in"), what to do then. */
  what: string;
  loses: string;
  fix: string;
}

export interface TokenSource {
  /** A valid access token that stays valid for at least minTtlSec (refreshing under the lock when needed). */
  get(minTtlSec?: number): Promise<string>;
  /** The server rejected `rejected` (401): refresh unless the stored token already differs; returns the new token. */
  refresh(rejected: string): Promise<string>;
}
