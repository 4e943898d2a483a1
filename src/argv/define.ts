/** A command's one table of options and arguments: the parser, help, completion and `run`'s type derive from it. */
import type { Readable } from 'node:stream';
import { type OptionKey, type Row, SETTINGS, type SettingsSource } from '../config.js';
import type { CommandContext } from '../context.js';
import type { Deps } from '../deps.js';
import { usageError } from '../errors.js';
import { DEFAULT_MAX_RETRIES, MAX_RETRIES } from '../request-defaults.js';

/** What the parser holds for one option; its definition's `read` turns it into a typed value. */
export type Value = string | number | boolean | string[] | undefined;
export type Values = Record<string, Value>;

export type OptionType = 'boolean' | 'string' | 'integer';

/** An option as the parser, the help pages and the completions see it. */
export interface OptionSpec {
  flag: `--${string}`;
  /** One-letter alias, e.g. `-X`; a value may follow in the same word (`-XPATCH`) or the next. */
  short?: `-${string}`;
  /** Given more than once, every value is kept, in order (a list of strings). */
  repeatable?: boolean;
  key: string;
  type: OptionType;
  /** Placeholder shown in help, e.g. `<seconds>`. */
  value?: string;
  description: string;
  defaultValue?: string | number | boolean;
  /** Shown in help when the default is not a literal value (e.g. "your locale"). */
  defaultText?: string;
  choices?: readonly string[];
  /** Words an integer option takes besides numbers, e.g. `auto` for --concurrency. */
  keywords?: readonly string[];
  /** Values offered by completion and help without refusing others. */
  suggestions?: readonly string[];
  min?: number;
  max?: number;
  env?: string;
  negates?: boolean;
  /** The setting this option gives (`option.setting`); settingFlags (config.ts) finds the option by it, not its key. */
  setting?: OptionKey;
}

export type ArgSpec = {
  name: string;
  description: string;
  choices?: readonly string[];
  /** The last argument only: it takes every word left, one at least (`exec -- <command> [<arg>...]`). */
  variadic?: boolean;
};
/** An option in a command's table: how it looks on the command line, and the typed value `run` gets. */
export type Option<T> = Omit<OptionSpec, 'key'> & { kind: 'option'; read(value: Value): T };
/** A positional argument in a command's table; arguments are taken in the table's order, each its words. */
export type Argument<T> = ArgSpec & { kind: 'argument'; read(words: readonly string[]): T };

type Table = Record<string, Option<unknown> | Argument<unknown>>;

/** What `run` receives: every entry of the table, as the value its definition reads. */
export type OptionsOf<T extends Table> = { [K in keyof T]: ReturnType<T[K]['read']> };

type Common = Pick<OptionSpec, 'flag' | 'short' | 'value' | 'description' | 'defaultText' | 'env' | 'suggestions'>;
type Bounds = Pick<OptionSpec, 'min' | 'max'>;

function make<T>(type: OptionType, spec: Omit<OptionSpec, 'key' | 'type'>, read: (v: Value) => T): Option<T> {
  return { ...spec, kind: 'option', type, read };
}

function integer(spec: Common & Bounds & { defaultValue: number }): Option<number>;
function integer(spec: Common & Bounds): Option<number | undefined>;
function integer(spec: Common & Bounds & { defaultValue?: number }): Option<number | undefined> {
  return make('integer', spec, (v) => (typeof v === 'number' ? v : spec.defaultValue));
}

/** The kinds of option; each reads its parsed value into the type `run` sees. */
export const option = {
  boolean: (spec: Common) => make('boolean', spec, (v) => v === true),
  /** `--no-<name>`: true unless given. */
  negated: (spec: Common) => make('boolean', { ...spec, negates: true }, (v) => v !== false),
  string: (spec: Common) => make('string', spec, (v) => (typeof v === 'string' ? v : undefined)),
  choice: <const C extends string>(spec: Common & { choices: readonly C[] }) =>
    make('string', spec, (v) => spec.choices.find((c) => c === v)),
  list: (spec: Common) => make('string', { ...spec, repeatable: true }, (v) => (Array.isArray(v) ? v : [])),
  integer,
  /** A whole number or one of a few words, e.g. `--concurrency 4|auto`. */
  integerOr: <const K extends string>(spec: Common & Bounds & { keywords: readonly K[]; defaultValue: K | number }) =>
    make('integer', spec, (v) =>
      typeof v === 'number' ? v : (spec.keywords.find((k) => k === v) ?? spec.defaultValue),
    ),
  /** `--max-retries`, with the default and the bound of every retried request (src/request-defaults.ts). */
  retries: (description: string) =>
    integer({
      flag: '--max-retries',
      value: '<n>',
      description,
      defaultValue: DEFAULT_MAX_RETRIES,
      min: 0,
      max: MAX_RETRIES,
    }),
  /** A setting's flag, described by its row in SETTINGS; `run` gets it as given, the value is in the settings. */
  setting: <const K extends OptionKey>(key: K) => {
    const row: Row<unknown> = SETTINGS[key];
    const { env, value, description = '', keywords, min } = row;
    const defaultText = row.defaultText ?? (typeof row.default === 'string' ? row.default : undefined);
    const spec = { flag: `--${key}` as const, env, value, description, defaultText, setting: key, keywords, min };
    type Given = (typeof SETTINGS)[K] extends { keywords: readonly (infer W)[] } ? W | number : string;
    // The parser gives a number or one of the row's words for a flag with keywords, text for any other.
    return make(keywords ? 'integer' : 'string', spec, (v) =>
      // TS cannot narrow a type parameter by typeof.
      typeof v === 'string' || typeof v === 'number' ? (v as Given) : undefined,
    );
  },
};

export function argument(spec: Omit<ArgSpec, 'choices' | 'variadic'>): Argument<string>;
export function argument<const C extends string>(
  spec: Omit<ArgSpec, 'variadic'> & { choices: readonly C[] },
): Argument<C>;
export function argument(spec: Omit<ArgSpec, 'variadic'>): Argument<string> {
  return {
    ...spec,
    kind: 'argument',
    read: ([v]) => {
      const found = spec.choices ? spec.choices.find((c) => c === v) : v;
      // The parser has checked the count and the choices; a missing one here would be a parser bug, told the same way.
      if (found === undefined) throw usageError('USAGE_ARGUMENT_MISSING', `missing argument <${spec.name}>`);
      return found;
    },
  };
}

/** What a command's `run` may use besides its options. */
export interface Invocation {
  deps: Deps;
  /** Resolves settings (flag > env > config file > default); throws a usage error for invalid ones. */
  context: () => Promise<CommandContext>;
  /** Where the settings are, for the commands that work on the file itself. */
  settings: SettingsSource;
  stdin: () => Readable & { isTTY?: boolean };
  surface: Surface;
  /** Until the returned function is called, SIGINT, SIGTERM and SIGHUP go to `to` rather than stopping the run. */
  relaySignals: (to: (signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP') => void) => () => void;
}

interface About {
  name: string;
  /** One line, for the root help page and the completions. */
  summary: string;
  description: string;
  examples: readonly string[];
}

export interface LeafCommand extends About {
  options: readonly OptionSpec[];
  args?: readonly ArgSpec[];
  subcommands?: undefined;
  /** Answers without waiting on the network or a person, so Ctrl-C is not taken over before it starts. */
  quick?: boolean;
  /** The options `run` would get: read from the table and checked, or a usage error; nothing else happens. */
  read(parsed: Parsed): unknown;
  run(parsed: Parsed, inv: Invocation): Promise<void>;
}

export type Parsed = { options: Values; args: readonly string[] };

export type CommandGroup = About & {
  options: readonly OptionSpec[];
  args?: undefined;
  subcommands: readonly LeafCommand[];
};

export type CommandSpec = LeafCommand | CommandGroup;

/** A command's name, and its definition loaded on demand, so that a run loads the code of its own command only. */
export interface CommandEntry {
  name: string;
  /** Left out of help and completion (helpers the completion scripts call). */
  hidden?: boolean;
  load(): Promise<CommandSpec>;
}

export type Surface = { globals: readonly OptionSpec[]; commands: readonly CommandEntry[] };

/** Every command's definition, or every one that help lists. */
export function loadAll(surface: Surface, { hidden }: { hidden: boolean }): Promise<CommandSpec[]> {
  return Promise.all(surface.commands.filter((c) => hidden || !c.hidden).map((c) => c.load()));
}

export type Run<T extends Table> = (options: OptionsOf<T>, invocation: Invocation) => Promise<void>;

/** A command from its table and body; `check` refuses combinations of options before anything is read or written. */
export function defineCommand<T extends Table>(
  def: About & { options: T; quick?: boolean; check?: (options: OptionsOf<T>) => void; run: Run<T> },
): LeafCommand {
  const { options: table, run, check, ...about } = def;
  const read = (parsed: Parsed): OptionsOf<T> => {
    const options = readOptions(table, parsed);
    check?.(options);
    return options;
  };
  return { ...about, ...splitTable(table), read, run: (parsed, inv) => run(read(parsed), inv) };
}

/** A table's options (each under its key) and arguments, in the table's order. */
export function splitTable(table: Table): { options: OptionSpec[]; args?: ArgSpec[] } {
  const options: OptionSpec[] = [];
  const args: ArgSpec[] = [];
  for (const [key, entry] of Object.entries(table))
    if (entry.kind === 'option') options.push({ ...entry, key });
    else args.push(entry);
  return args.length ? { options, args } : { options };
}

export function defineGroup(def: About & { subcommands: readonly LeafCommand[] }): CommandGroup {
  return { ...def, options: [] };
}

/** The last argument of a table: every word left, one at least (the parser has checked there is one). */
export function rest(spec: Omit<ArgSpec, 'choices' | 'variadic'>): Argument<[string, ...string[]]> {
  return {
    ...spec,
    variadic: true,
    kind: 'argument',
    read: (words) => {
      const [first, ...others] = words;
      if (first === undefined) throw usageError('USAGE_ARGUMENT_MISSING', `missing argument <${spec.name}>`);
      return [first, ...others];
    },
  };
}

export function readOptions<T extends Table>(table: T, parsed: Parsed): OptionsOf<T> {
  const out: Record<string, unknown> = {};
  let position = 0;
  const wordsOf = (entry: Argument<unknown>): readonly string[] =>
    entry.variadic ? parsed.args.slice(position) : parsed.args.slice(position, ++position);
  for (const [key, entry] of Object.entries(table))
    out[key] = entry.kind === 'option' ? entry.read(parsed.options[key]) : entry.read(wordsOf(entry));
  // The one place TypeScript cannot follow: a loop over the table's keys. Each value is its own entry's `read`.
  return out as OptionsOf<T>;
}
