import { defineCommand, option, type OptionsOf } from '../argv/define.js';
// Imported up front, unlike every other command's body: scripts run `idcli token` before every API call, so its
// cached-token path lives in the entry chunk instead of costing extra module loads.
import { runToken } from '../commands/token.js';
import { MIN_TTL_SEC } from '../token-rules.js';

const options = () => ({
  refresh: option.boolean({
    flag: '--refresh',
    description:
      'refresh even if the cached token is still valid (a refresh another idcli completed after this one started counts)',
  }),
  json: option.boolean({
    flag: '--json',
    description: 'print {access_token, token_type, expires_in, expires_at, scope, id_token}',
  }),
  header: option.boolean({ flag: '--header', description: 'print "Authorization: Bearer <token>", for curl -H @-' }),
  minTtl: option.integer({
    flag: '--min-ttl',
    value: '<seconds>',
    // No defaultValue: with IDCLI_ACCESS_TOKEN only a --min-ttl that was given is checked (see runToken).
    description: `refresh when the cached token expires sooner than this (default: ${MIN_TTL_SEC}); with IDCLI_ACCESS_TOKEN, exit 3 when its expiry is this close or unknown`,
    min: 0,
  }),
});
export type TokenOptions = OptionsOf<ReturnType<typeof options>>;

export const token = defineCommand({
  name: 'token',
  summary: 'print a valid access token',
  description: 'Print a valid access token, refreshing it (Serial PKCE) when it is about to expire.',
  options,
  examples: [
    'idcli token',
    'idcli token --header | curl -H @- https://api.example.com/v1/me   # the token in no command line',
    'idcli token --min-ttl 600 > /dev/null || exit   # in CI: valid for 10 more minutes, or fail early',
    'idcli token --json | jq -r .expires_at',
  ],
  // A cached token is printed within milliseconds; a refresh takes Ctrl-C over when it asks for the lock, before
  // anything is sent or written.
  quick: true,
  run: async (o, inv) => runToken(o, await inv.context()),
});
