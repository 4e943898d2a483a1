import type { CommandContext } from '../context.js';
import { IdcliError, ExitCode } from '../errors.js';

export async function runStatus(_opts: unknown, _ctx?: CommandContext): Promise<void> {
  throw new IdcliError('`idcli status` is not implemented yet', ExitCode.INTERNAL);
}
