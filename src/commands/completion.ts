import { bashScript, fishScript, zshScript } from '../completion/scripts.js';
import { programSpec } from '../completion/spec.js';

export function completionScript(shell: 'bash' | 'zsh' | 'fish'): string {
  const spec = programSpec();
  if (shell === 'bash') return bashScript(spec);
  if (shell === 'zsh') return zshScript(spec);
  return fishScript(spec);
}
