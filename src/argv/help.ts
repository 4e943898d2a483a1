/** Help pages rendered from the command table: purpose, usage, options with defaults and env, examples. */
import type { CommandSpec, OptionSpec, Surface } from './define.js';

const EXIT_CODES = `Exit codes: 0 ok, 1 internal error or output not written, 2 usage or configuration,
3 sign-in needed, 4 server or network failure, 5 server broke the contract, 129 hung up, 130 interrupted,
143 terminated.`;

function optionLabel(o: OptionSpec, aligned = false): string {
  // In a list where some options have a one-letter alias, the long names line up.
  const names = o.short ? `${o.short}, ${o.flag}` : aligned ? `    ${o.flag}` : o.flag;
  return o.value ? `${names} ${o.value}` : names;
}

function optionText(o: OptionSpec): string {
  const notes: string[] = [];
  if (o.choices) notes.push(o.choices.join('|'));
  else if (o.suggestions) notes.push(`e.g. ${o.suggestions.join('|')}`);
  if (o.repeatable) notes.push('repeatable');
  if (o.defaultValue !== undefined) notes.push(`default: ${o.defaultValue}`);
  else if (o.defaultText) notes.push(`default: ${o.defaultText}`);
  if (o.env) notes.push(`env ${o.env}`);
  return notes.length ? `${o.description} (${notes.join('; ')})` : o.description;
}

function table(rows: [string, string][]): string {
  const width = Math.min(28, Math.max(...rows.map(([l]) => l.length)));
  return rows
    .map(([l, r]) => (l.length > width ? `  ${l}\n  ${' '.repeat(width)}  ${r}` : `  ${l.padEnd(width)}  ${r}`))
    .join('\n');
}

/** A command's name and what follows it, as listed under its parent. */
function synopsis(c: CommandSpec): string {
  return c.name + (c.args ? ` <${c.args.map((a) => a.name).join('> <')}>` : c.subcommands ? ' <subcommand>' : '');
}

function examples(lines: readonly string[]): string {
  return lines.length ? `\n\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}` : '';
}

export function rootHelp(version: string, { commands: all, globals }: Surface): string {
  const commands = all.filter((c) => !c.hidden).map((c): [string, string] => [synopsis(c), c.summary]);
  commands.push(['help [command]', 'show help for a command']);
  const options: [string, string][] = [
    ...globals.map((o): [string, string] => [optionLabel(o), optionText(o)]),
    ['-h, --help', 'show help'],
    ['-V, --version', `print the version (${version})`],
  ];
  return `Usage: idcli [options] <command>

Sign in to the identity service and pull data out of its APIs.

Commands:
${table(commands)}

Options (before or after the command):
${table(options)}${examples([
    'idcli login                         # sign in through the browser',
    'idcli token                         # print an access token for scripts',
    'idcli api users/123                 # one authenticated request, the token in no command line',
    'idcli token --header | curl -H @- https://api.example.com/v1/me',
    'idcli list users > users.ndjson     # stream a collection as NDJSON',
  ])}

${EXIT_CODES}
Run \`idcli <command> --help\` for a command's options and examples.
`;
}

export function commandHelp(path: readonly CommandSpec[], { globals }: Surface): string {
  const cmd = path[path.length - 1]!;
  const name = path.map((c) => c.name).join(' ');
  const args = cmd.args?.map((a) => ` <${a.name}>`).join('') ?? '';
  const sub = cmd.subcommands ? ' <subcommand>' : '';
  let text = `Usage: idcli ${name}${cmd.options.length ? ' [options]' : ''}${sub}${args}\n\n${cmd.description}\n`;
  if (cmd.subcommands) {
    text += `\nSubcommands:\n${table(cmd.subcommands.map((s) => [synopsis(s), s.summary]))}\n`;
  }
  if (cmd.args?.length) {
    text += `\nArguments:\n${table(cmd.args.map((a) => [`<${a.name}>`, a.choices ? `${a.description} (${a.choices.join('|')})` : a.description]))}\n`;
  }
  const aligned = cmd.options.some((o) => o.short);
  const own: [string, string][] = [
    ...cmd.options.map((o): [string, string] => [optionLabel(o, aligned), optionText(o)]),
    ['-h, --help', 'show help'],
  ];
  text += `\nOptions:\n${table(own)}\n`;
  text += `\nGlobal options (before or after the command):\n${table(globals.map((o) => [optionLabel(o), optionText(o)]))}`;
  text += examples(cmd.examples);
  return `${text}\n`;
}
