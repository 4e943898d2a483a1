import type { CommandContext } from '../context.js';
import type { TokenSource } from '../deps.js';
import { IdcliError, ExitCode } from '../errors.js';

export async function openSession(_ctx: Omit<CommandContext, 'tokens'>): Promise<TokenSource> {
  throw new IdcliError('stored sign-in is not implemented yet', ExitCode.INTERNAL, {
    hint: 'set IDCLI_ACCESS_TOKEN for now',
  });
}
