/** `idcli exec`: run a command with a valid access token in its environment, never in a command line. */
import { defineCommand, option, rest } from '../../argv/define.js';
import { ExitStatus, usageError } from '../../errors.js';
import { clip, printable } from '../../printable.js';
import { MIN_TTL_SEC } from '../../token-rules.js';

const DEFAULT_ENV = 'IDCLI_ACCESS_TOKEN';

/**
 * Names the dynamic loader (LD_*, DYLD_*) or a shell reads as instructions: a token there is run, printed in an error
 * (ld.so names the "library" it cannot preload) or breaks the command (PATH, IFS), never just passed along.
 */
const REFUSED_ENV = /^(?:LD_.*|DYLD_.*|PATH|IFS|ENV|BASH_ENV|SHELLOPTS|PS4|NODE_OPTIONS)$/;

export const command = defineCommand({
  name: 'exec',
  summary: 'run a command with the access token in its environment',
  description: `Run a command (no shell) with a valid access token in its environment, as ${DEFAULT_ENV} or the --env name. Its stdin, stdout and stderr are its own, SIGINT, SIGTERM and SIGHUP are passed on (a Ctrl-C typed at a terminal reaches it directly, once), and idcli exits with its exit status (128 + n when signal n ended it; 127 when it is not found, 126 when it cannot be run).`,
  options: {
    env: option.string({
      flag: '--env',
      value: '<NAME>',
      description: 'the environment variable that holds the token',
      defaultText: DEFAULT_ENV,
    }),
    minTtl: option.integer({
      flag: '--min-ttl',
      value: '<seconds>',
      description: 'refresh first when the token expires sooner than this',
      defaultValue: MIN_TTL_SEC,
      min: 0,
    }),
    command: rest({ name: 'command', description: 'the command to run, then its arguments' }),
  },
  examples: [
    'idcli exec -- sh -c \'curl -fsS -H "Authorization: Bearer $IDCLI_ACCESS_TOKEN" https://api.example.com/v1/me\'',
    'idcli exec --env API_TOKEN --min-ttl 900 -- ./deploy.sh production',
  ],
  // Ctrl-C is taken over only to pass it on, once the command runs; a refresh takes it over as `token` does.
  quick: true,
  check(o) {
    if (o.env !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(o.env))
      throw usageError(
        'EXEC_ENV_NAME_INVALID',
        `--env must be an environment variable name (letters, digits and _, not first a digit), not ${clip(printable(o.env))}`,
      );
    if (o.env !== undefined && REFUSED_ENV.test(o.env))
      throw usageError(
        'EXEC_ENV_NAME_INVALID',
        `--env ${o.env} would have the dynamic loader or a shell read the token as instructions; name another variable`,
      );
  },
  async run(o, invocation) {
    const ctx = await invocation.context();
    const source = await ctx.tokens();
    const token = await source.get(o.minTtl);
    const { runChild } = await import('./child.js');
    const env = { ...ctx.deps.env, [o.env ?? DEFAULT_ENV]: token };
    const status = await runChild({
      argv: o.command,
      env,
      relaySignals: invocation.relaySignals,
      verbose: (msg) => ctx.deps.log.verbose(msg),
    });
    if (status !== 0) throw new ExitStatus(status);
  },
});
