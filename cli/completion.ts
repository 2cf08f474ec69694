/**
 * Shell completion generated from the commander tree, so it never lags behind the commands:
 * `eval "$(timeshare completion bash)"` (zsh: `timeshare completion zsh`, through bashcompinit).
 */
import type { Command } from 'commander';

function wordsOf(cmd: Command, globals: string[]): string[] {
  const options = cmd.options.map((o) => o.long).filter((o): o is string => !!o);
  return [...cmd.commands.map((c) => c.name()), ...options, ...globals];
}

export function bashCompletion(program: Command): string {
  const globals = program.options.map((o) => o.long).filter((o): o is string => !!o);
  const paths: [string, string[]][] = [];
  const walk = (cmd: Command, path: string[]) => {
    paths.push([path.join(' '), wordsOf(cmd, [...globals, '--help'])]);
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  const known = paths.filter(([p]) => p).map(([p]) => `"${p}"`);
  const cases = paths.map(([p, w]) => `    "${p}") words="${[...new Set(w)].join(' ')}" ;;`);
  return `# timeshare bash completion: eval "$(timeshare completion bash)"
_timeshare() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next w i words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    next="\${path:+$path }$w"
    case "$next" in
      ${known.join('|')}) path="$next" ;;
    esac
  done
  case "$path" in
${cases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _timeshare timeshare
`;
}

export function completionCommand(program: Command): void {
  program
    .command('completion [shell]')
    .description('print a shell completion script (bash or zsh)')
    .action((shell: string = 'bash') => {
      if (shell !== 'bash' && shell !== 'zsh') throw new Error(`unsupported shell ${shell}: bash or zsh`);
      const prelude = shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : '';
      process.stdout.write(prelude + bashCompletion(program));
    });
}
