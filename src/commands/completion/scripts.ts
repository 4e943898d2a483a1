/** Completion scripts for bash, zsh and fish from the spec; profiles come from the hidden `idcli __profiles`. */
import type { CommandSpec as Definition, LeafCommand, OptionSpec } from '../../argv/define.js';
import { CONFIG_KEYS } from '../../config.js';
import { shellQuote } from '../../shell-quote.js';

/** A command as the scripts complete it: its options, and what its positional arguments may be. */
interface CommandSpec {
  name: string;
  description: string;
  options: readonly OptionSpec[];
  /** Fixed values for the first positional argument (subcommands of `config`, shells of `completion`). */
  positional?: readonly string[];
  /** A group's subcommands, each with its options and the values of its own first argument (config keys, actions). */
  subs?: readonly SubSpec[];
  /** The first argument is a command to run (`exec`): command names complete. */
  runs?: boolean;
  /** Name of a free first positional argument (a path or URL), for shells that describe it. */
  argument?: string;
}

interface SubSpec {
  name: string;
  options: readonly OptionSpec[];
  positional?: readonly string[];
  /** It takes a free second argument (`config set <key> <value>`). */
  second?: boolean;
}

/** A subcommand's first argument: its choices, or the config keys where it takes a key. */
function subSpec(s: LeafCommand): SubSpec {
  const first = s.args?.[0];
  const positional = first?.choices ?? (first?.name === 'key' ? CONFIG_KEYS : undefined);
  return { name: s.name, options: s.options, ...(positional ? { positional } : {}), second: (s.args?.length ?? 0) > 1 };
}

type ProgramSpec = { globals: readonly OptionSpec[]; commands: CommandSpec[] };

/** `listed`: the commands help lists, loaded. */
export function completionScript(
  shell: 'bash' | 'zsh' | 'fish',
  globals: readonly OptionSpec[],
  listed: readonly Definition[],
): string {
  const commands = listed.map((c): CommandSpec => {
    const first = c.args?.[0];
    const spec: CommandSpec = { name: c.name, description: c.summary, options: c.options };
    if (c.subcommands)
      Object.assign(spec, { positional: c.subcommands.map((s) => s.name), subs: c.subcommands.map(subSpec) });
    if (first?.choices) spec.positional = first.choices;
    else if (first && !c.subcommands) spec.argument = first.name;
    if (first?.variadic) spec.runs = true;
    return spec;
  });
  return { bash: bashScript, zsh: zshScript, fish: fishScript }[shell]({ globals, commands });
}

const words = (list: readonly string[]) => list.join(' ');
/** Words as arguments of a bash command: a word with anything but plain characters is quoted, so no glob expands it. */
const bashWords = (list: readonly string[]) => list.map((w) => (/^[\w.,:=+-]+$/.test(w) ? w : shellQuote(w))).join(' ');
const names = (o: OptionSpec) => (o.short ? [o.flag, o.short] : [o.flag]);
const takesValue = (o: OptionSpec) => o.type !== 'boolean';
// Completion only offers values, so values that are suggested but not enforced complete the same way.
const choices = (o: OptionSpec) => o.choices ?? o.suggestions ?? o.keywords;
/** Profiles are looked up when completing, not fixed in the script. */
const isProfile = (o: OptionSpec) => o.flag === '--profile';

/** Every option word that takes a value, with the commands where it does (`api --header`, not `token --header`). */
interface ValueWord {
  words: string[];
  option: OptionSpec;
  /** undefined: takes a value wherever it is accepted. */
  commands?: string[];
}

function valueWords(spec: ProgramSpec): ValueWord[] {
  const byLong = new Map<string, { option: OptionSpec; words: Set<string>; commands: Set<string> }>();
  const switches = new Set<string>();
  const add = (o: OptionSpec, command: string | undefined) => {
    const entry = byLong.get(o.flag) ?? { option: o, words: new Set<string>(), commands: new Set<string>() };
    names(o).forEach((w) => entry.words.add(w));
    if (command) entry.commands.add(command);
    byLong.set(o.flag, entry);
  };
  for (const o of spec.globals) if (takesValue(o)) add(o, undefined);
  for (const c of spec.commands)
    for (const o of [...c.options, ...(c.subs ?? []).flatMap((s) => s.options)])
      if (takesValue(o)) add(o, c.name);
      else switches.add(o.flag);
  return [...byLong.entries()].map(([long, e]) => ({
    words: [...e.words],
    option: e.option,
    ...(switches.has(long) && !spec.globals.some((o) => o.flag === long) ? { commands: [...e.commands] } : {}),
  }));
}

/** A bash case branch whose action applies only while completing one of `commands` (all when undefined). */
function bashBranch(pattern: string[], action: string, commands?: string[]): string {
  if (!commands) return `    ${pattern.join('|')}) ${action} ;;`;
  return `    ${pattern.join('|')}) case "$cmd" in ${commands.join('|')}) ${action} ;; esac ;;`;
}

/** The words that take a value wherever they are accepted, for one branch of them all. */
const unbound = (values: ValueWord[]) => values.filter((v) => !v.commands).flatMap((v) => v.words);

/** The bash case branch of one command: its options, and its subcommands' or arguments' values. */
function bashCommandCase(c: CommandSpec, globals: string): string {
  const optionWords = (options: readonly OptionSpec[]) => bashWords([...options.flatMap(names), '--help']);
  const opts = optionWords(c.options);
  if (c.subs) {
    const subOptions = c.subs.map((s) => `${s.name}) _idcli_offer "$cur" ${optionWords(s.options)} ${globals} ;;`);
    const subValues = c.subs
      .filter((s) => s.positional)
      .map((s) => `${s.name}) _idcli_offer "$cur" ${bashWords(s.positional!)} ;;`);
    return `    ${c.name})
      if [[ "$cur" == -* ]]; then
        case "$sub" in ${[...subOptions, `*) _idcli_offer "$cur" ${opts} ${globals} ;;`].join(' ')} esac
        return
      fi
      if [ -n "$sub" ]; then [ -z "$extra" ] && case "$sub" in ${subValues.join(' ')} esac; return; fi
      _idcli_offer "$cur" ${bashWords(c.positional ?? [])} ;;`;
  }
  if (c.positional) {
    return `    ${c.name})
      if [[ "$cur" == -* ]]; then _idcli_offer "$cur" ${opts} ${globals}; return; fi
      [ -z "$sub" ] && _idcli_offer "$cur" ${bashWords(c.positional)} ;;`;
  }
  // The command to run completes as a command name, and what follows it is its own.
  if (c.runs)
    return `    ${c.name})
      if [ -n "$sub" ]; then return; fi
      if [[ "$cur" == -* ]]; then _idcli_offer "$cur" ${opts} ${globals}; return; fi
      while IFS= read -r w; do COMPREPLY+=("$w"); done < <(compgen -c -- "$cur" | sort -u) ;;`;
  return `    ${c.name}) _idcli_offer "$cur" ${opts} ${globals} ;;`;
}

function bashScript(spec: ProgramSpec): string {
  const values = valueWords(spec);
  const fixed = values.filter((v) => !isProfile(v.option) && !choices(v.option));
  const valueCases = [
    '    --profile) _idcli_profiles "$cur"; return ;;',
    ...values
      .filter((v) => choices(v.option))
      .map((v) => bashBranch(v.words, `_idcli_offer "$cur" ${bashWords(choices(v.option)!)}; return`, v.commands)),
    ...fixed.filter((v) => v.commands).map((v) => bashBranch(v.words, 'return', v.commands)),
    bashBranch(unbound(fixed), 'return'),
  ];
  const skipCases = [
    bashBranch(unbound(values), 'skip=1'),
    ...values.filter((v) => v.commands).map((v) => bashBranch(v.words, 'skip=1', v.commands)),
  ].map((line) => `  ${line}`);
  const globals = bashWords(spec.globals.map((o) => o.flag));
  const commandCases = spec.commands.map((c) => bashCommandCase(c, globals));
  // Words are filtered by prefix in a loop, never through compgen -W: it expands its word list like a command line,
  // so a profile name from config.json such as $(…) or * would run or glob.
  return `# bash completion for idcli — eval "$(idcli completion bash)" or save it under bash-completion/completions/idcli
# Offers the words that start with $1, each as it is: nothing in them is expanded.
_idcli_offer() {
  local prefix="$1" w
  shift
  for w in "$@"; do
    if [[ "$w" == "$prefix"* ]]; then COMPREPLY+=("$w"); fi
  done
}
# The profiles of config.json that start with $1, read line by line as data.
_idcli_profiles() {
  local w
  while IFS= read -r w; do
    if [[ "$w" == "$1"* ]]; then COMPREPLY+=("$w"); fi
  done < <(idcli __profiles 2>/dev/null)
}
_idcli() {
  local cur prev cmd="" sub="" extra="" i w skip=""
  COMPREPLY=()
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if [ -n "$skip" ]; then skip=""; continue; fi
    case "$w" in
${skipCases.join('\n')}
      -*) ;;
      *) if [ -z "$cmd" ]; then cmd="$w"; elif [ -z "$sub" ]; then sub="$w"; else extra=1; fi ;;
    esac
  done
  case "$prev" in
${valueCases.join('\n')}
  esac
  case "$cmd" in
    "") _idcli_offer "$cur" ${bashWords(spec.commands.map((c) => c.name))} ${globals} --help --version ;;
${commandCases.join('\n')}
  esac
}
complete -F _idcli idcli
`;
}

function zshOption(o: OptionSpec): string {
  const desc = o.description.replace(/[[\]:']/g, '');
  const values = choices(o);
  const action = isProfile(o) ? '_idcli_profiles' : values ? `(${words(values)})` : ' ';
  const tail = takesValue(o) ? `[${desc}]:value:${action}'` : `[${desc}]'`;
  // A repeatable option may appear again; any other excludes itself and its alias once given.
  if (!o.short) return `'${o.repeatable ? '*' : ''}${o.flag}${takesValue(o) ? '=' : ''}${tail}`;
  const group = o.repeatable ? "'*'" : `'(${o.short} ${o.flag})'`;
  const forms = takesValue(o) ? `{${o.short}+,${o.flag}=}` : `{${o.short},${o.flag}}`;
  return `${group}${forms}'${tail}`;
}

function zshCommand(c: CommandSpec, globals: readonly OptionSpec[]): string {
  const args = [...c.options, ...globals].map(zshOption);
  if (c.subs) return zshGroup(c, args, globals);
  if (c.positional) args.push(`'1:value:(${words(c.positional)})'`);
  else if (c.runs) args.push("'(-)1:command: _command_names -e'", "'*::arguments: _normal'");
  else if (c.argument) args.push(`'1:${c.argument}: '`);
  // -S: a `--` ends idcli's options, and the command's words are its own.
  return `    ${c.name}) _arguments -s${c.runs ? ' -S' : ''} \\\n      ${args.join(' \\\n      ')} ;;`;
}

/** A group: its subcommand first, then that subcommand's own options and argument, as git's completion nests them. */
function zshGroup(c: CommandSpec, args: string[], globals: readonly OptionSpec[]): string {
  const subs = c.subs!.map((s) => {
    const own = [...s.options, ...globals].map(zshOption);
    if (s.positional) own.push(`'1:value:(${words(s.positional)})'`);
    if (s.second) own.push("'2:value: '");
    return `          ${s.name}) _arguments -s \\\n            ${own.join(' \\\n            ')} ;;`;
  });
  return `    ${c.name})
      _arguments -C -s \\\n        ${[...args, `'1:subcommand:(${words(c.positional ?? [])})'`, "'*::arg:->sub'"].join(' \\\n        ')}
      case $state in
        sub)
          case $line[1] in
${subs.join('\n')}
          esac ;;
      esac ;;`;
}

function zshScript(spec: ProgramSpec): string {
  return `#compdef idcli
# zsh completion for idcli — save as _idcli in a directory of your $fpath
_idcli_profiles() {
  local -a profiles expl
  profiles=(\${(f)"$(idcli __profiles 2>/dev/null)"})
  # compadd takes each name whole; _describe would read a colon in one as the start of a description.
  _wanted profiles expl profile compadd -a profiles
}
_idcli() {
  # Not \`commands\`: that would hide zsh's table of the commands on PATH, which \`exec\` completes from.
  local -a idcli_commands
  idcli_commands=(
${spec.commands.map((c) => `    '${c.name}:${c.description.replace(/'/g, '')}'`).join('\n')}
  )
  local curcontext="$curcontext" state line
  _arguments -C \\
    ${spec.globals.map(zshOption).join(' \\\n    ')} \\
    '--help[show help]' '--version[print the version]' \\
    '1:command:->command' '*::arg:->args'
  case $state in
    command) _describe 'command' idcli_commands ;;
    args)
      case $line[1] in
${spec.commands.map((c) => zshCommand(c, spec.globals)).join('\n')}
      esac ;;
  esac
}
if [ "$funcstack[1]" = "_idcli" ]; then _idcli "$@"; else compdef _idcli idcli; fi
`;
}

function fishOption(o: OptionSpec, condition: string): string {
  const parts = [`complete -c idcli -n '${condition}' -l ${o.flag.replace(/^--/, '')}`];
  if (o.short) parts.push(`-s ${o.short.slice(1)}`);
  const values = choices(o);
  if (takesValue(o))
    parts.push(isProfile(o) ? `-x -a '(idcli __profiles 2>/dev/null)'` : values ? `-x -a '${words(values)}'` : '-r');
  parts.push(`-d '${o.description.replace(/'/g, "\\'")}'`);
  return parts.join(' ');
}

function fishScript(spec: ProgramSpec): string {
  const lines = [
    '# fish completion for idcli — save as ~/.config/fish/completions/idcli.fish',
    'complete -c idcli -f',
    ...spec.commands.map(
      (c) => `complete -c idcli -n '__fish_use_subcommand' -a ${c.name} -d '${c.description.replace(/'/g, "\\'")}'`,
    ),
    ...spec.globals.map((o) => fishOption(o, 'true')),
  ];
  for (const c of spec.commands) {
    const seen = `__fish_seen_subcommand_from ${c.name}`;
    for (const o of c.options) lines.push(fishOption(o, seen));
    if (c.subs) {
      lines.push(
        `complete -c idcli -n '${seen}; and not __fish_seen_subcommand_from ${words(c.positional ?? [])}' -a '${words(c.positional ?? [])}'`,
      );
      for (const s of c.subs) {
        const inSub = `${seen}; and __fish_seen_subcommand_from ${s.name}`;
        for (const o of s.options) lines.push(fishOption(o, inSub));
        if (s.positional) lines.push(`complete -c idcli -n '${inSub}' -a '${words(s.positional)}'`);
      }
    } else if (c.positional) lines.push(`complete -c idcli -n '${seen}' -a '${words(c.positional)}'`);
    else if (c.runs) lines.push(`complete -c idcli -n '${seen}' -a '(__fish_complete_subcommand --fcs-skip=2)'`);
  }
  return `${lines.join('\n')}\n`;
}
