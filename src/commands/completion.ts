import { bashScript, fishScript, zshScript } from '../completion/scripts.js';
import type { ProgramSpec } from '../completion/spec.js';

export function completionScript(shell: 'bash' | 'zsh' | 'fish', spec: ProgramSpec): string {
  if (shell === 'bash') return bashScript(spec);
  if (shell === 'zsh') return zshScript(spec);
  return fishScript(spec);
}
