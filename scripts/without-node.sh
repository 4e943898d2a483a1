#!/usr/bin/env bash
# Runs a command where the machine's own node cannot be found: in a private mount namespace (unshare -m, which
# needs root) /dev/null is mounted over each system-wide node binary. The tests of the single executable run under
# it (test/support/cli.ts, IDCLI_TEST_EXE); the Node that runs the tests themselves must sit elsewhere (CI uses the
# registry's runtime from a temp directory), and the harness takes that one off the executable's PATH.
set -euo pipefail
if [ "${IDCLI_NODE_MASKED:-}" != 1 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  exec "${sudo[@]}" unshare -m --propagation private env PATH="$PATH" IDCLI_NODE_MASKED=1 bash "$0" "$@"
fi
for node in /usr/bin/node /usr/local/bin/node; do
  if [ -e "$node" ]; then mount --bind /dev/null "$node"; fi
done
exec "$@"
