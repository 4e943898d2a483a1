/** `idcli token`: a valid access token on stdout for scripts, refreshed with Serial PKCE when needed. */
import { defineCommand, option } from '../../argv/define.js';
import { usageError } from '../../errors.js';
import { openCredentials, requireEnvLifetime } from '../../oauth/credentials.js';
import { secondsLeft } from '../../oauth/session.js';
import type { CredentialRecord } from '../../store/record.js';
import { MIN_TTL_SEC } from '../../token-rules.js';

export const command = defineCommand({
  name: 'token',
  summary: 'print a valid access token',
  description: 'Print a valid access token, refreshing it (Serial PKCE) when it is about to expire.',
  options: {
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
      // No defaultValue: with IDCLI_ACCESS_TOKEN only a --min-ttl that was given is checked (see run).
      description: `refresh when the cached token expires sooner than this (default: ${MIN_TTL_SEC}); with IDCLI_ACCESS_TOKEN, exit 3 when its expiry is this close or unknown`,
      min: 0,
    }),
  },
  examples: [
    'idcli token',
    'idcli token --header | curl -H @- https://api.example.com/v1/me   # the token in no command line',
    'idcli token --min-ttl 600 > /dev/null || exit   # in CI: valid for 10 more minutes, or fail early',
    'idcli token --json | jq -r .expires_at',
  ],
  // A cached token is printed within milliseconds; a refresh takes Ctrl-C over when it asks for the lock, before
  // anything is sent or written.
  quick: true,
  check(o) {
    if (o.json && o.header)
      throw usageError('USAGE_CONFLICTING_OPTIONS', '--json and --header cannot be used together');
  },
  async run(o, invocation) {
    const ctx = await invocation.context();
    const { deps } = ctx;
    const credentials = await openCredentials(ctx);
    let record: Partial<CredentialRecord> & { accessToken: string };
    if (credentials.kind === 'env') {
      // Nothing refreshes a token from the environment: only a --min-ttl the user gave guards it, by its JWT expiry.
      if (o.minTtl !== undefined) requireEnvLifetime(credentials, o.minTtl, deps.now());
      record = { accessToken: credentials.token, expiresAt: credentials.expiresAt };
    } else {
      record = await credentials.session.valid(o.minTtl ?? MIN_TTL_SEC, o.refresh);
    }
    const out = {
      access_token: record.accessToken,
      token_type: record.tokenType ?? 'Bearer',
      expires_in: record.expiresAt === undefined ? null : secondsLeft(record, deps.now()),
      expires_at: record.expiresAt === undefined ? null : new Date(record.expiresAt).toISOString(),
      scope: record.scope ?? null,
      id_token: record.idToken ?? null,
    };
    // Never the refresh token or the verifier: they stay in the store (docs/cli.md, "token").
    // The header form lets a script hand the token to curl through a pipe (`curl -H @-`), never through argv.
    if (o.header) deps.print(`Authorization: Bearer ${out.access_token}\n`);
    else deps.print(o.json ? `${JSON.stringify(out, null, 2)}\n` : `${out.access_token}\n`);
  },
});
