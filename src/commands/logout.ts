/** `idcli logout`: forget this profile's sign-in everywhere it may be stored. */
import type { CommandContext } from '../context.js';
import { forgetSignIn } from '../oauth/session.js';

export async function runLogout(ctx: CommandContext): Promise<void> {
  const removed = await forgetSignIn(ctx);
  const { profile } = ctx.settings;
  ctx.deps.log.info(
    removed.length > 0
      ? `Signed out of profile ${profile} (removed from ${removed.join(' and ')})`
      : `No stored sign-in for profile ${profile}; nothing to remove`,
  );
}
