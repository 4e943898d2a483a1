/** `idcli logout`: forget this profile's sign-in everywhere it may be stored. */
import { defineCommand } from '../../argv/define.js';
import { forgetSignIn } from '../../oauth/session.js';

export const command = defineCommand({
  name: 'logout',
  summary: 'remove the stored credentials',
  description: 'Remove the stored credentials of this profile from every credential store.',
  options: {},
  examples: ['idcli logout', 'idcli --profile staging logout'],
  async run(_o, invocation) {
    const ctx = await invocation.context();
    const removed = await forgetSignIn(ctx);
    const { profile } = ctx.settings;
    ctx.deps.log.info(
      removed.length > 0
        ? `Signed out of profile ${profile} (removed from ${removed.join(' and ')})`
        : `No stored sign-in for profile ${profile}; nothing to remove`,
    );
  },
});
