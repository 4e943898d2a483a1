/** Global options before or after the command, its own after it; every mistake exit 2, with a "did you mean". */
import { type ErrorCode, usageError } from '../errors.js';
import { clip, quoted } from '../printable.js';
import { suggest } from '../suggest.js';
import {
  type CommandEntry,
  type CommandSpec,
  type LeafCommand,
  loadAll,
  type OptionSpec,
  type Surface,
  type Values,
} from './define.js';

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

const usage = (code: ErrorCode, message: string, near?: string) =>
  usageError(code, message, near ? `did you mean '${near}'?` : 'see `idcli --help`');

/** What the words read so far have said: the command path, its arguments, and the options for it and for all. */
interface Scan {
  readonly surface: Surface;
  readonly path: CommandSpec[];
  readonly args: string[];
  readonly options: Values;
  readonly globals: Values;
  help?: boolean;
  version?: boolean;
  positionalOnly?: boolean;
}

/** Reads the words in three steps: each word in turn, then the command found, then its arguments and defaults. */
export async function parseArgv(argv: readonly string[], surface: Surface): Promise<Parsed> {
  const scan: Scan = { surface, path: [], args: [], options: {}, globals: {} };
  for (let i = 0; i < argv.length; i++) i = await readWord(scan, argv, i);
  if (scan.version) return { kind: 'version' };
  const cmd = current(scan);
  if (scan.help || !cmd) return { kind: 'help', path: scan.path };
  if (cmd.subcommands)
    throw usageError(
      'USAGE_SUBCOMMAND_MISSING',
      `'${cmd.name}' needs a subcommand: ${cmd.subcommands.map((s) => s.name).join(', ')}`,
      `see \`idcli ${cmd.name} --help\``,
    );
  checkArgs(cmd, scan);
  for (const o of cmd.options)
    if (scan.options[o.key] === undefined && o.defaultValue !== undefined) scan.options[o.key] = o.defaultValue;
  return { kind: 'run', path: scan.path, command: cmd, args: scan.args, options: scan.options, globals: scan.globals };
}

/** The option `flag` names, by its long name or its one-letter alias. */
const named = (flag: string) => (o: OptionSpec) => o.flag === flag || o.short === flag;

const current = (scan: Scan): CommandSpec | undefined => scan.path[scan.path.length - 1];

const forCommand = (scan: Scan): string => (scan.path.length ? ` for '${scan.path.map((c) => c.name).join(' ')}'` : '');

/** Takes the word at `i` (and the value after it, for an option that takes one); returns the index of the last taken. */
async function readWord(scan: Scan, argv: readonly string[], i: number): Promise<number> {
  const token = argv[i]!;
  if (scan.positionalOnly || token === '-' || !token.startsWith('-') || /^-\d/.test(token))
    await positional(scan, token);
  else if (token === '--') scan.positionalOnly = true;
  else if (token === '-h' || token === '--help') scan.help = true;
  else if ((token === '-V' || token === '--version') && scan.path.length === 0) scan.version = true;
  else return readOption(scan, argv, i);
  return i;
}

/** `--flag=value`, `--flag value`; `-X value` or `-Xvalue` for one-letter aliases. */
async function readOption(scan: Scan, argv: readonly string[], i: number): Promise<number> {
  const token = argv[i]!;
  const long = token.startsWith('--');
  const eq = long ? token.indexOf('=') : -1;
  const flag = long ? (eq === -1 ? token : token.slice(0, eq)) : token.slice(0, 2);
  const inline = eq !== -1 ? token.slice(eq + 1) : !long && token.length > 2 ? token.slice(2) : undefined;
  const matches = named(flag);
  const own = current(scan)?.options.find(matches);
  const spec = own ?? scan.surface.globals.find(matches);
  if (!spec) throw await unknownOption(scan, flag, long ? flag : token);
  const into = own ? scan.options : scan.globals;
  if (spec.type === 'boolean') {
    if (inline !== undefined) {
      // `-ix` is not two switches: bundling is not supported, so say which word was not understood.
      throw long
        ? usageError('USAGE_OPTION_TAKES_NO_VALUE', `option ${quoted(flag)} takes no value`)
        : usage('USAGE_UNKNOWN_OPTION', `unknown option ${quoted(token)}${forCommand(scan)}`);
    }
    into[spec.key] = !spec.negates;
    return i;
  }
  const raw = inline ?? argv[++i];
  if (raw === undefined)
    throw usageError('USAGE_OPTION_VALUE_MISSING', `option '${flag} ${spec.value ?? '<value>'}' needs a value`);
  const value = convert(spec, raw);
  const before = into[spec.key];
  into[spec.key] = spec.repeatable ? [...(Array.isArray(before) ? before : []), String(value)] : value;
  return i;
}

/** An option neither the command nor the globals know: said where it belongs, or what was meant. */
async function unknownOption(scan: Scan, flag: string, shown: string): Promise<Error> {
  const known = [...(current(scan)?.options ?? []), ...scan.surface.globals].map((o) => o.flag);
  const elsewhere =
    scan.path.length === 0 && (await loadAll(scan.surface, { hidden: true })).some((c) => c.options.some(named(flag)));
  if (elsewhere)
    return usageError(
      'USAGE_OPTION_MISPLACED',
      `option ${quoted(flag)} belongs after its command`,
      `e.g. idcli <command> ${clip(flag)}`,
    );
  return usage('USAGE_UNKNOWN_OPTION', `unknown option ${quoted(shown)}${forCommand(scan)}`, suggest(flag, known));
}

/** A word that is not an option: `help`, a command or subcommand name, or an argument of the command. */
async function positional(scan: Scan, token: string): Promise<void> {
  const cmd = current(scan);
  if (!cmd && token === 'help') {
    scan.help = true;
    return;
  }
  if (cmd && !cmd.subcommands) {
    scan.args.push(token);
    // The words after a command that idcli runs are its own, options or not (as for `env` or `sudo`).
    if (cmd.args?.[scan.args.length - 1]?.variadic) scan.positionalOnly = true;
    return;
  }
  const among: readonly (CommandEntry | LeafCommand)[] = cmd ? cmd.subcommands : scan.surface.commands;
  // `idcli help <command> [<subcommand>]` finds only the commands that help lists.
  const found = among.find((c) => c.name === token && !(scan.help && isHidden(c)));
  if (!found) {
    const what = cmd ? `subcommand ${quoted(`${cmd.name} ${token}`)}` : `command ${quoted(token)}`;
    const visible = among.filter((c) => !isHidden(c)).map((c) => c.name);
    throw usage('USAGE_UNKNOWN_COMMAND', `unknown ${what}`, suggest(token, visible));
  }
  scan.path.push('load' in found ? await found.load() : found);
}

const isHidden = (c: CommandEntry | LeafCommand): boolean => 'hidden' in c && c.hidden === true;

/** The command's arguments: as many as it names, each among its choices where it has them. */
function checkArgs(cmd: LeafCommand, scan: Scan): void {
  const { args } = scan;
  const wanted = cmd.args ?? [];
  if (args.length < wanted.length)
    throw usageError(
      'USAGE_ARGUMENT_MISSING',
      `missing argument <${wanted[args.length]!.name}>`,
      `see \`idcli ${scan.path.map((c) => c.name).join(' ')} --help\``,
    );
  if (args.length > wanted.length && !wanted[wanted.length - 1]?.variadic)
    throw usageError('USAGE_UNEXPECTED_ARGUMENT', `unexpected argument ${quoted(args[wanted.length]!)}`);
  wanted.forEach((a, j) => checkChoice(`<${a.name}>`, a.choices, args[j]!));
}

/** `value` among the `choices` of an argument or option (`what`), if it has them. */
function checkChoice(what: string, choices: readonly string[] | undefined, value: string): void {
  if (choices && !choices.includes(value))
    throw usage(
      'USAGE_INVALID_CHOICE',
      `${what} must be one of ${choices.join(', ')}, not ${quoted(value)}`,
      suggest(value, choices),
    );
}

/** An option's value, checked against its type, bounds and choices. */
function convert(spec: OptionSpec, value: string): string | number {
  if (spec.type === 'integer') {
    if (spec.keywords?.includes(value)) return value;
    if (!/^\d+$/.test(value)) {
      const or = spec.keywords ? ` or ${spec.keywords.join(', ')}` : '';
      throw usageError('USAGE_NOT_A_NUMBER', `${spec.flag} must be a whole number${or}, not ${quoted(value)}`);
    }
    const n = Number(value);
    const min = spec.min ?? 0;
    const range = (rule: string) =>
      usageError('USAGE_NUMBER_OUT_OF_RANGE', `${spec.flag} must be ${rule}, not ${clip(value)}`);
    if (spec.max !== undefined && (n < min || n > spec.max)) throw range(`between ${min} and ${spec.max}`);
    if (n < min) throw range(`at least ${min}`);
    // Past 2^53 a number is no longer exact: 9007199254740993 would quietly become 9007199254740992.
    if (n > Number.MAX_SAFE_INTEGER) throw range(`a whole number no larger than ${Number.MAX_SAFE_INTEGER}`);
    return n;
  }
  checkChoice(spec.flag, spec.choices, value);
  return value;
}
