import type { Command, Option } from 'commander';

/** What the shell scripts need to know of the program, read off the commander tree so the two never drift. */
export interface OptionSpec {
  long: string;
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
}

export interface ProgramSpec {
  globals: OptionSpec[];
  commands: CommandSpec[];
}

function optionSpec(o: Option): OptionSpec | undefined {
  if (!o.long || o.long === '--help' || o.long === '--version') return undefined;
  const spec: OptionSpec = {
    long: o.long,
    description: o.description.replace(/\s*\(.*$/, ''),
    takesValue: o.required || o.optional,
  };
  if (o.argChoices) spec.choices = o.argChoices;
  if (o.long === '--profile') spec.dynamic = 'profiles';
  return spec;
}

export function programSpec(program: Command, configKeys: readonly string[]): ProgramSpec {
  const globals = program.options.map(optionSpec).filter((o): o is OptionSpec => o !== undefined);
  const globalNames = new Set(globals.map((g) => g.long));
  const commands: CommandSpec[] = [];
  for (const c of program.commands) {
    if ((c as unknown as { _hidden?: boolean })._hidden || c.name() === 'help') continue;
    const spec: CommandSpec = {
      name: c.name(),
      description: c.summary() || c.description(),
      options: c.options
        .map(optionSpec)
        .filter((o): o is OptionSpec => o !== undefined && !globalNames.has(o.long)),
    };
    if (c.commands.length > 0) {
      spec.positional = c.commands.map((s) => s.name());
      spec.keys = configKeys;
    }
    const choices = c.registeredArguments[0]?.argChoices;
    if (choices) spec.positional = choices;
    commands.push(spec);
  }
  return { globals, commands };
}
