/**
 * A small parser for the command line described in src/cmd/index.ts. Global options are accepted before or after the command; a command's
 * own options after it. Every mistake is a usage error (exit 2) with a "did you mean" where one is close.
 */
import { usageError } from '../errors.js';
import { clip, quoted } from '../printable.js';
import { suggest } from '../suggest.js';
import type { CommandSpec, LeafCommand, OptionSpec, Surface, Values } from './define.js';

export type Parsed =
  | { kind: 'version' }
  | { kind: 'help'; path: readonly CommandSpec[] }
  | {
      kind: 'run';
      path: readonly CommandSpec[];
      command: LeafCommand;
      args: string[];
      options: Values;
      globals: Values;
    };

const usage = (message: string, near?: string) =>
  usageError(message, near ? `did you mean '${near}'?` : 'see `idcli --help`');

export function parseArgv(argv: readonly string[], surface: Surface): Parsed {
  const { commands } = surface;
  const path: CommandSpec[] = [];
  const args: string[] = [];
  const options: Values = {};
  const globals: Values = {};
  let help = false;
  let version = false;
  let positionalOnly = false;
  const current = () => path[path.length - 1];
  const forCommand = () => (path.length ? ` for '${path.map((c) => c.name).join(' ')}'` : '');

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (positionalOnly || token === '-' || !token.startsWith('-') || /^-\d/.test(token)) {
      positional(token);
      continue;
    }
    if (token === '--') {
      positionalOnly = true;
      continue;
    }
    if (token === '-h' || token === '--help') {
      help = true;
      continue;
    }
    if ((token === '-V' || token === '--version') && path.length === 0) {
      version = true;
      continue;
    }
    // `--flag=value`, `--flag value`; `-X value` or `-Xvalue` for one-letter aliases.
    const long = token.startsWith('--');
    const eq = long ? token.indexOf('=') : -1;
    const flag = long ? (eq === -1 ? token : token.slice(0, eq)) : token.slice(0, 2);
    const stuck = long ? undefined : token.length > 2 ? token.slice(2) : undefined;
    const inline = eq === -1 ? stuck : token.slice(eq + 1);
    const matches = (o: OptionSpec) => o.flag === flag || o.short === flag;
    const own = current()?.options.find(matches);
    const spec = own ?? surface.globals.find(matches);
    if (!spec) {
      const known = [...(current()?.options ?? []), ...surface.globals].map((o) => o.flag);
      const elsewhere = path.length === 0 && commands.some((c) => c.options.some(matches));
      if (elsewhere)
        throw usageError(`option ${quoted(flag)} belongs after its command`, `e.g. idcli <command> ${clip(flag)}`);
      throw usage(`unknown option ${quoted(long ? flag : token)}${forCommand()}`, suggest(flag, known));
    }
    const into = own ? options : globals;
    if (spec.type === 'boolean') {
      if (inline !== undefined) {
        // `-ix` is not two switches: bundling is not supported, so say which word was not understood.
        throw long
          ? usageError(`option ${quoted(flag)} takes no value`)
          : usage(`unknown option ${quoted(token)}${forCommand()}`);
      }
      into[spec.key] = !spec.negates;
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw usageError(`option '${flag} ${spec.value ?? '<value>'}' needs a value`);
    const value = convert(spec, raw);
    const before = into[spec.key];
    into[spec.key] = spec.repeatable ? [...(Array.isArray(before) ? before : []), String(value)] : value;
  }

  if (version) return { kind: 'version' };
  const cmd = current();
  if (help || !cmd) return { kind: 'help', path };
  if (cmd.subcommands) {
    throw usageError(
      `'${cmd.name}' needs a subcommand: ${cmd.subcommands.map((s) => s.name).join(', ')}`,
      `see \`idcli ${cmd.name} --help\``,
    );
  }
  const wanted = cmd.args ?? [];
  if (args.length < wanted.length) {
    throw usageError(
      `missing argument <${wanted[args.length]!.name}>`,
      `see \`idcli ${path.map((c) => c.name).join(' ')} --help\``,
    );
  }
  if (args.length > wanted.length) throw usageError(`unexpected argument ${quoted(args[wanted.length]!)}`);
  wanted.forEach((a, j) => {
    if (a.choices && !a.choices.includes(args[j]!)) {
      throw usage(
        `<${a.name}> must be one of ${a.choices.join(', ')}, not ${quoted(args[j]!)}`,
        suggest(args[j]!, a.choices),
      );
    }
  });
  for (const o of cmd.options)
    if (options[o.key] === undefined && o.defaultValue !== undefined) options[o.key] = o.defaultValue;
  return { kind: 'run', path, command: cmd, args, options, globals };

  function positional(token: string): void {
    const cmd = current();
    if (!cmd && token === 'help') {
      help = true;
      return;
    }
    if (cmd && !cmd.subcommands) {
      args.push(token);
      return;
    }
    const among = cmd ? cmd.subcommands : commands;
    // `idcli help <command> [<subcommand>]` finds only the commands that help lists.
    const found = among.find((c) => c.name === token && !(help && c.hidden));
    if (!found) {
      const what = cmd ? `subcommand ${quoted(`${cmd.name} ${token}`)}` : `command ${quoted(token)}`;
      const visible = among.filter((c) => !c.hidden).map((c) => c.name);
      throw usage(`unknown ${what}`, suggest(token, visible));
    }
    path.push(found);
  }
}

/** An option's value, checked against its type, bounds and choices. */
function convert(spec: OptionSpec, value: string): string | number {
  if (spec.type === 'integer') {
    if (spec.keywords?.includes(value)) return value;
    if (!/^\d+$/.test(value)) {
      const or = spec.keywords ? ` or ${spec.keywords.join(', ')}` : '';
      throw usageError(`${spec.flag} must be a whole number${or}, not ${quoted(value)}`);
    }
    const n = Number(value);
    const min = spec.min ?? 0;
    if (spec.max !== undefined && (n < min || n > spec.max))
      throw usageError(`${spec.flag} must be between ${min} and ${spec.max}, not ${clip(value)}`);
    if (n < min) throw usageError(`${spec.flag} must be at least ${min}, not ${clip(value)}`);
    // Past 2^53 a number is no longer exact: 9007199254740993 would quietly become 9007199254740992.
    if (n > Number.MAX_SAFE_INTEGER) {
      throw usageError(
        `${spec.flag} must be a whole number no larger than ${Number.MAX_SAFE_INTEGER}, not ${clip(value)}`,
      );
    }
    return n;
  }
  if (spec.choices && !spec.choices.includes(value)) {
    throw usage(
      `${spec.flag} must be one of ${spec.choices.join(', ')}, not ${quoted(value)}`,
      suggest(value, spec.choices),
    );
  }
  return value;
}
