/** Help pages rendered from the command table: purpose, usage, options with defaults and env, examples. */
import type { CommandSpec, OptionSpec } from './define.js';

const EXIT_CODES = `Exit codes: 0 ok, 1 internal error or output not written, 2 usage or configuration,
3 sign-in needed, 4 server or network failure, 5 server broke the contract, 129 hung up, 130 interrupted,
143 terminated.`;

function optionRow(o: OptionSpec, aligned = false): [string, string] {
  // In a list where some options have a one-letter alias, the long names line up.
  const names = o.short ? `${o.short}, ${o.flag}` : aligned ? `    ${o.flag}` : o.flag;
  return [o.value ? `${names} ${o.value}` : names, optionText(o)];
}

const HELP_ROW: [string, string] = ['-h, --help', 'show help'];

function optionText(o: OptionSpec): string {
  const notes = [
    o.choices ? o.choices.join('|') : o.suggestions && `e.g. ${o.suggestions.join('|')}`,
    o.repeatable && 'repeatable',
    o.defaultValue !== undefined ? `default: ${o.defaultValue}` : o.defaultText && `default: ${o.defaultText}`,
    o.env && `env ${o.env}`,
  ].filter(Boolean);
  return notes.length ? `${o.description} (${notes.join('; ')})` : o.description;
}

function table(rows: [string, string][]): string {
  const width = Math.min(28, Math.max(...rows.map(([l]) => l.length)));
  return rows
    .map(([l, r]) => (l.length > width ? `  ${l}\n  ${' '.repeat(width)}  ${r}` : `  ${l.padEnd(width)}  ${r}`))
    .join('\n');
}

/** What follows a command's name: its arguments, or its subcommand. */
function operands(c: CommandSpec): string {
  if (c.subcommands) return ' <subcommand>';
  return c.args ? c.args.map((a) => (a.variadic ? ` [--] <${a.name}>...` : ` <${a.name}>`)).join('') : '';
}

const examples = (lines: readonly string[]) =>
  lines.length ? `\n\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}` : '';

/** The page of `idcli --help`: `listed` are the commands it lists, loaded (loadAll). */
export function rootHelp(version: string, globals: readonly OptionSpec[], listed: readonly CommandSpec[]): string {
  const commands = listed.map((c): [string, string] => [c.name + operands(c), c.summary]);
  commands.push(['help [command]', 'show help for a command']);
  const options: [string, string][] = [
    ...globals.map((o) => optionRow(o)),
    HELP_ROW,
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

export function commandHelp(path: readonly CommandSpec[], globals: readonly OptionSpec[]): string {
  const cmd = path[path.length - 1]!;
  const name = path.map((c) => c.name).join(' ');
  let text = `Usage: idcli ${name}${cmd.options.length ? ' [options]' : ''}${operands(cmd)}\n\n${cmd.description}\n`;
  if (cmd.subcommands)
    text += `\nSubcommands:\n${table(cmd.subcommands.map((s) => [s.name + operands(s), s.summary]))}\n`;
  if (cmd.args?.length)
    text += `\nArguments:\n${table(cmd.args.map((a) => [`<${a.name}>`, a.choices ? `${a.description} (${a.choices.join('|')})` : a.description]))}\n`;
  const aligned = cmd.options.some((o) => o.short);
  text += `\nOptions:\n${table([...cmd.options.map((o) => optionRow(o, aligned)), HELP_ROW])}\n`;
  text += `\nGlobal options (before or after the command):\n${table(globals.map((o) => optionRow(o)))}`;
  text += examples(cmd.examples);
  return `${text}\n`;
}
