// `cluster-registry completion bash|zsh`: shell completion of commands and options, generated from
// the command tree itself so it never lists a command or flag that is not there. Zsh uses the
// same function through bashcompinit.
import { Command } from 'commander';

/** Every command path (space-separated, '' for the root) with its subcommands and options, and the options that take a value. */
function commandTable(root: Command): { table: Map<string, string[]>; valueFlags: Set<string> } {
  const table = new Map<string, string[]>();
  const valueFlags = new Set<string>();
  const walk = (cmd: Command, path: string): void => {
    const flags = cmd.options.flatMap((o) => {
      const names = [o.long, o.short].filter((f): f is string => !!f);
      if (o.required || o.optional) for (const n of names) valueFlags.add(n);
      return names;
    });
    table.set(path, [...new Set([...cmd.commands.map((c) => c.name()), ...flags, '--help'])].sort());
    for (const c of cmd.commands) walk(c, path ? `${path} ${c.name()}` : c.name());
  };
  walk(root, '');
  return { table, valueFlags };
}

/** The bash completion script for a program named `name` (also the kubectl plugin's name). */
export function bashCompletion(root: Command, name: string): string {
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}_complete`;
  const { table, valueFlags } = commandTable(root);
  const known = [...table.keys()].filter(Boolean).map((p) => JSON.stringify(p)).join('|');
  const cases = [...table].map(([path, words]) => `    ${JSON.stringify(path)}) cr_words=${JSON.stringify(words.join(' '))} ;;`).join('\n');
  return `# ${name} completion for bash (zsh: autoload -U +X bashcompinit && bashcompinit first)
${fn}() {
  local cur prev cr_path="" cr_words="" i w
  local value_flags=${JSON.stringify(` ${[...valueFlags].sort().join(' ')} `)}
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  # A flag's value (after a space, or after '=', which bash splits into a word of its own): files.
  case "$value_flags" in *" $prev "*) COMPREPLY=(); return ;; esac
  if [ "$prev" = "=" ] || [ "$cur" = "=" ]; then COMPREPLY=(); return; fi
  # The command path: the words before the cursor that are neither options nor their values.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -* | =) continue ;; esac
    [ "\${COMP_WORDS[i-1]}" = "=" ] && continue
    case "$value_flags" in *" \${COMP_WORDS[i-1]} "*) continue ;; esac
    # A word that names no command under the path so far is an argument of it (trace KIND NAME).
    case "\${cr_path:+$cr_path }$w" in
      ${known}) cr_path="\${cr_path:+$cr_path }$w" ;;
    esac
  done
  case "$cr_path" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$cr_words" -- "$cur"))
}
complete -o default -F ${fn} ${name}
complete -o default -F ${fn} kubectl-cluster_registry
`;
}

export function completionCommand(root: () => Command): Command {
  return new Command('completion')
    .description('print the shell completion script: source <(cluster-registry completion bash)')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new Error(`no completion for ${shell}: bash or zsh`);
      const script = bashCompletion(root(), 'cluster-registry');
      process.stdout.write(shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${script}` : script);
    });
}
