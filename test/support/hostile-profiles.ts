/**
 * Profile names that would run a command or glob if a shell took them as code, and a config directory holding them
 * beside a valid one: for `__profiles` in process (test/commands/completion/command.test.ts) and for each shell's
 * completion script (test/e2e/completion.test.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The names; each that runs leaves a file in `marks`. */
export function hostileNames(marks: string): string[] {
  return [
    `$(touch ${marks}/dollar)`,
    `\`touch ${marks}/backtick\``,
    `(touch ${marks}/fish)`,
    `$(touch ${marks}/nested)x$(touch ${marks}/nested2)`,
    '*',
    '{a,b}',
    '~',
    'x:y',
    '__proto__',
  ];
}

/** A private config directory `cfg` whose config.json has a profile of each of `names` and one named staging. */
export async function hostileConfig(cfg: string, names: readonly string[]): Promise<string> {
  await mkdir(cfg, { mode: 0o700 });
  const profiles = Object.fromEntries([...names, 'staging'].map((n) => [n, { scope: 'x' }]));
  await writeFile(join(cfg, 'config.json'), JSON.stringify({ profiles }));
  return cfg;
}
