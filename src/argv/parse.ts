/**
 * A small parser for the table in spec.ts. Global options are accepted before or after the command; a command's
 * own options after it. Every mistake is a usage error (exit 2) with a "did you mean" where one is close.
 */
import { usageError } from '../errors.js';
import { suggest } from '../suggest.js';
import { COMMANDS, type CommandSpec, GLOBAL_OPTIONS, type OptionSpec } from './spec.js';

export type Values = Record<string, string | number | boolean | undefined>;

export type Parsed =
  | { kind: 'version' }
  | { kind: 'help'; path: readonly CommandSpec[] }
  | { kind: 'run'; path: readonly CommandSpec[]; args: string[]; options: Values; globals: Values };

const usage = (message: string, near?: string) =>
  usageError(message, near ? `did you mean '${near}'?` : 'see `idcli --help`');

export function parseArgv(argv: readonly string[]): Parsed {
  const path: CommandSpec[] = [];
  const args: string[] = [];
  const options: Values = {};
  const globals: Values = {};
  let help = false;
  let version = false;
  let positionalOnly = false;
  const current = () => path[path.length - 1];

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
    const eq = token.indexOf('=');
    const flag = eq === -1 ? token : token.slice(0, eq);
    const inline = eq === -1 ? undefined : token.slice(eq + 1);
    const own = current()?.options.find((o) => o.flag === flag);
    const global = GLOBAL_OPTIONS.find((o) => o.flag === flag);
    const spec = own ?? global;
    if (!spec) {
      const known = [...(current()?.options ?? []), ...GLOBAL_OPTIONS].map((o) => o.flag);
      const elsewhere = path.length === 0 && COMMANDS.some((c) => c.options.some((o) => o.flag === flag));
      if (elsewhere) throw usageError(`option '${flag}' belongs after its command`, `e.g. idcli <command> ${flag}`);
      throw usage(
        `unknown option '${flag}'${path.length ? ` for '${path.map((c) => c.name).join(' ')}'` : ''}`,
        suggest(flag, known),
      );
    }
    let raw: string | undefined;
    if (spec.type === 'boolean') {
      if (inline !== undefined) throw usageError(`option '${flag}' takes no value`);
    } else {
      raw = inline ?? argv[++i];
      if (raw === undefined) throw usageError(`option '${flag} ${spec.value ?? '<value>'}' needs a value`);
    }
    (own ? options : globals)[spec.key] = convert(spec, raw);
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
  if (args.length > wanted.length) throw usageError(`unexpected argument '${args[wanted.length]}'`);
  wanted.forEach((a, j) => {
    if (a.choices && !a.choices.includes(args[j]!)) {
      throw usage(`<${a.name}> must be one of ${a.choices.join(', ')}, not '${args[j]}'`, suggest(args[j]!, a.choices));
    }
  });
  for (const o of cmd.options)
    if (options[o.key] === undefined && o.defaultValue !== undefined) options[o.key] = o.defaultValue;
  return { kind: 'run', path, args, options, globals };

  function positional(token: string): void {
    const cmd = current();
    if (!cmd && token === 'help') {
      help = true;
      return;
    }
    if (help && !cmd) {
      // `idcli help <command> [<subcommand>]`
      const found = COMMANDS.find((c) => c.name === token && !c.hidden);
      if (!found) throw usage(`unknown command '${token}'`, suggest(token, visibleNames(COMMANDS)));
      path.push(found);
      return;
    }
    if (!cmd) {
      const found = COMMANDS.find((c) => c.name === token);
      if (!found) throw usage(`unknown command '${token}'`, suggest(token, visibleNames(COMMANDS)));
      path.push(found);
      return;
    }
    if (cmd.subcommands) {
      const found = cmd.subcommands.find((c) => c.name === token);
      if (!found)
        throw usage(`unknown subcommand '${cmd.name} ${token}'`, suggest(token, visibleNames(cmd.subcommands)));
      path.push(found);
      return;
    }
    args.push(token);
  }
}

function visibleNames(commands: readonly CommandSpec[]): string[] {
  return commands.filter((c) => !c.hidden).map((c) => c.name);
}

function convert(spec: OptionSpec, raw: string | undefined): string | number | boolean {
  if (spec.type === 'boolean') return !spec.negates;
  const value = raw!;
  if (spec.type === 'integer') {
    if (!/^\d+$/.test(value)) throw usageError(`${spec.flag} must be a whole number, not '${value}'`);
    const n = Number(value);
    const min = spec.min ?? 0;
    const max = spec.max ?? Number.MAX_SAFE_INTEGER;
    if (n < min || n > max) {
      throw usageError(
        `${spec.flag} must be ${max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`}, not ${value}`,
      );
    }
    return n;
  }
  if (spec.choices && !spec.choices.includes(value)) {
    throw usage(`${spec.flag} must be one of ${spec.choices.join(', ')}, not '${value}'`, suggest(value, spec.choices));
  }
  return value;
}
