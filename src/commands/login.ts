import type { CommandContext } from '../context.js';
import { IdcliError, ExitCode } from '../errors.js';

export async function runLogin(_opts: unknown, _ctx?: CommandContext): Promise<void> {
  throw new IdcliError('`idcli login` is not implemented yet', ExitCode.INTERNAL);
}
