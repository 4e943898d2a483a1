import type { OptionSpec as ArgvOption, Surface } from '../argv/define.js';
import { CONFIG_KEYS } from '../config.js';

/** What the shell scripts need to know of the program, read off the command table so the two never drift. */
export interface OptionSpec {
  long: string;
  /** One-letter alias such as `-X`. */
  short?: string;
  /** May be given more than once. */
  repeatable?: boolean;
  description: string;
  takesValue: boolean;
  choices?: readonly string[];
  /** Values that are looked up when completing, not fixed in the script. */
  dynamic?: 'profiles';
}

export interface CommandSpec {
  name: string;
  description: string;
  options: OptionSpec[];
  /** Fixed values for the first positional argument (subcommands of `config`, shells of `completion`). */
  positional?: readonly string[];
  /** Second positional: config keys after `config set|get|unset`. */
  keys?: readonly string[];
  /** Name of a free first positional argument (a path or URL), for shells that describe it. */
  argument?: string;
}

export interface ProgramSpec {
  globals: OptionSpec[];
  commands: CommandSpec[];
}

function optionSpec(o: ArgvOption): OptionSpec {
  const spec: OptionSpec = { long: o.flag, description: o.description, takesValue: o.type !== 'boolean' };
  if (o.short) spec.short = o.short;
  if (o.repeatable) spec.repeatable = true;
  // Completion only offers values, so values that are suggested but not enforced complete the same way.
  const values = o.choices ?? o.suggestions ?? o.keywords;
  if (values) spec.choices = values;
  if (o.flag === '--profile') spec.dynamic = 'profiles';
  return spec;
}

export function programSpec({ commands: all, globals }: Surface): ProgramSpec {
  const commands = all
    .filter((c) => !c.hidden)
    .map((c): CommandSpec => {
      const spec: CommandSpec = { name: c.name, description: c.summary, options: c.options.map(optionSpec) };
      if (c.subcommands) {
        spec.positional = c.subcommands.map((s) => s.name);
        spec.keys = Object.keys(CONFIG_KEYS);
      }
      const first = c.args?.[0];
      if (first?.choices) spec.positional = first.choices;
      else if (first && !c.subcommands) spec.argument = first.name;
      return spec;
    });
  return { globals: globals.map(optionSpec), commands };
}
