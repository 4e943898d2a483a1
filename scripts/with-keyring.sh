#!/usr/bin/env bash
# Run a command inside a private D-Bus session with a fresh, unlocked gnome-keyring Secret Service, so keychain
# tests exercise the real OS keychain without touching (or being blocked by) the user's own login keyring.
#
#   scripts/with-keyring.sh npx vitest run test/store
#
# Inside, IDCLI_TEST_KEYRING=1 tells the tests a real keyring is there. The exit status is the command's.
# Without the tools it says so on stderr and runs the command without a keyring (keychain tests then skip,
# or fail when IDCLI_REQUIRE_KEYCHAIN=1).
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command...>" >&2
  exit 2
fi

missing=()
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "with-keyring: ${missing[*]} not found; running without a keyring (install dbus and gnome-keyring)" >&2
  exec "$@"
fi

# The inner script runs inside the private session (a quoted heredoc, so nothing expands out here); the command
# arrives as "$@", so arguments with spaces or quotes pass through untouched.
inner=$(cat <<'INNER'
set -uo pipefail
tmp="$(mktemp -d "${TMPDIR:-/tmp}/idcli-keyring.XXXXXX")"
chmod 700 "$tmp"
daemon_pid=""
cleanup() {
  if [ -n "$daemon_pid" ]; then
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM

# A fresh data dir means a fresh "login" keyring created with the password below, so it starts unlocked; an
# existing login keyring would stay locked and every call would wait for a prompt nobody answers. A fresh runtime
# dir too: gnome-keyring looks for a running daemon through $XDG_RUNTIME_DIR/keyring/control and would hand the
# work to the desktop's daemon instead of starting a private one.
export XDG_DATA_HOME="$tmp/data"
export XDG_RUNTIME_DIR="$tmp/runtime"
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

# The daemon reads the unlock password from stdin; the printf ends, the daemon keeps running in the foreground.
printf "%s" "idcli-test-keyring" | gnome-keyring-daemon --foreground --unlock --components=secrets \
  >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!

owned=""
for _ in $(seq 1 100); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
       org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"; then
    owned=1
    break
  fi
  if ! kill -0 "$daemon_pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$owned" ]; then
  echo "with-keyring: gnome-keyring did not take org.freedesktop.secrets within 10 s" >&2
  sed "s/^/with-keyring: /" "$tmp/daemon.log" >&2 || true
  exit 1
fi

export IDCLI_TEST_KEYRING=1
"$@"
status=$?
# A daemon that died under the tests explains every keychain failure after it; its log says why.
if ! kill -0 "$daemon_pid" 2>/dev/null; then
  echo "with-keyring: gnome-keyring-daemon exited during the run; its log:" >&2
  sed "s/^/with-keyring: /" "$tmp/daemon.log" >&2 || true
fi
exit "$status"
INNER
)
exec dbus-run-session -- bash -c "$inner" with-keyring "$@"
