/** `idcli credential`: the token for the tools that ask a helper for it, kubectl and git, never through argv. */
import { argument, defineCommand, defineGroup, option } from '../../argv/define.js';
import { MIN_TTL_SEC } from '../../token-rules.js';

const minTtl = option.integer({
  flag: '--min-ttl',
  value: '<seconds>',
  description: 'refresh first when the token expires sooner than this',
  defaultValue: MIN_TTL_SEC,
  min: 0,
});

export const command = defineGroup({
  name: 'credential',
  summary: 'hand the token to kubectl or git, as their credential helper',
  description:
    'Hand the token to kubectl (an exec credential plugin) or git (a credential helper). Neither ever prompts or opens a browser: without a usable sign-in they say so on stderr, for `idcli login` to fix.',
  examples: [
    'idcli credential kubectl',
    "printf 'protocol=https\\nhost=git.example.com\\n\\n' | idcli credential git get",
  ],
  subcommands: [
    defineCommand({
      name: 'kubectl',
      summary: "print an ExecCredential for kubectl's exec plugin",
      description:
        'Print an ExecCredential (the API version KUBERNETES_EXEC_INFO names, v1 when unset) with the token and its expiry, for a kubeconfig user whose exec block runs `idcli credential kubectl`.',
      options: {
        tokenType: option.choice({
          flag: '--token-type',
          value: '<type>',
          description: "which token: the ID token (what Kubernetes' OIDC authentication checks) or the access token",
          choices: ['id', 'access'],
          defaultText: 'id',
        }),
        minTtl,
      },
      examples: [
        'kubectl config set-credentials idcli --exec-api-version=client.authentication.k8s.io/v1 --exec-interactive-mode=Never --exec-command=idcli --exec-arg=credential --exec-arg=kubectl',
        'idcli credential kubectl --token-type access --min-ttl 300',
      ],
      quick: true,
      async run(o, invocation) {
        const { kubectlCredential } = await import('./kubectl.js');
        await kubectlCredential({ tokenType: o.tokenType ?? 'id', minTtl: o.minTtl }, await invocation.context());
      },
    }),
    defineCommand({
      name: 'git',
      summary: 'a git credential helper: get, store or erase',
      description:
        'A git credential helper. `get` answers with the access token (username oauth2) only for the protocol, host and port of api-base-url or base-url, and prints nothing for any other, so the token never goes elsewhere. `erase` (the server refused the token) makes the next `get` refresh it; `store` does nothing.',
      options: {
        action: argument({ name: 'action', description: 'what git asks', choices: ['get', 'store', 'erase'] }),
      },
      examples: [
        "git config --global credential.https://git.example.com.helper '!idcli credential git'",
        "printf 'protocol=https\\nhost=git.example.com\\n\\n' | idcli credential git get",
      ],
      quick: true,
      async run(o, invocation) {
        const { gitCredential } = await import('./git.js');
        await gitCredential(o.action, invocation);
      },
    }),
  ],
});
