#!/usr/bin/env bash
# Run a command inside a private D-Bus session with a fresh, unlocked gnome-keyring Secret Service, so keychain
# tests exercise the real OS keychain without touching (or being blocked by) the user's own login keyring.
#
#   scripts/with-keyring.sh npx vitest run test/store
#
# Inside, IDCLI_TEST_KEYRING=1 tells the tests a real keyring is there, and IDCLI_TEST_KEYRING_DIR where the
# daemon's exit is recorded (see test/support/keyring-watch.ts). The exit status is the command's, or 1 when the
# command passed but the daemon died under it.
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

# The session bus starts no service on demand: a daemon that dies under the tests must stay dead, not be replaced
# by one that D-Bus starts outside the private directories below, with the user's own keyring, locked.
config="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/test/support/dbus-session.conf"

# The inner script runs inside the private session (a quoted heredoc, so nothing expands out here); the command
# arrives as "$@", so arguments with spaces or quotes pass through untouched.
inner=$(cat <<'INNER'
set -uo pipefail
tmp="$(mktemp -d "${TMPDIR:-/tmp}/idcli-keyring.XXXXXX")"
chmod 700 "$tmp"
cleanup() {
  if [ -s "$tmp/daemon.pid" ] && [ ! -e "$tmp/daemon.exit" ]; then
    kill "$(cat "$tmp/daemon.pid")" 2>/dev/null || true
  fi
  wait 2>/dev/null || true
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

# The daemon reads the unlock password from stdin and runs in the foreground. Its watcher records how and when it
# ended (milliseconds since the epoch), so a death under the tests can be told apart from the tests' own failures.
(
  gnome-keyring-daemon --foreground --unlock --components=secrets < <(printf "%s" "idcli-test-keyring") \
    >"$tmp/daemon.log" 2>&1 &
  echo "$!" >"$tmp/daemon.pid"
  wait "$!"
  status=$?
  echo "$status $(date +%s%3N)" >"$tmp/daemon.exit.new"
  mv "$tmp/daemon.exit.new" "$tmp/daemon.exit"
) 2>/dev/null &

owned=""
for _ in $(seq 1 100); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
       org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"; then
    owned=1
    break
  fi
  if [ -e "$tmp/daemon.exit" ]; then break; fi
  sleep 0.1
done
if [ -z "$owned" ]; then
  echo "with-keyring: gnome-keyring did not take org.freedesktop.secrets within 10 s" >&2
  sed "s/^/with-keyring: /" "$tmp/daemon.log" >&2 || true
  exit 1
fi

export IDCLI_TEST_KEYRING=1 IDCLI_TEST_KEYRING_DIR="$tmp"
"$@"
status=$?
# A daemon that died under the tests explains every keychain failure after it: one line says when and why.
if [ -e "$tmp/daemon.exit" ]; then
  read -r code _ <"$tmp/daemon.exit"
  how="exit status $code"
  if [ "$code" -gt 128 ]; then how="killed by SIG$(kill -l "$((code - 128))")"; fi
  last=$(grep -E "ERROR|CRITICAL|WARNING" "$tmp/daemon.log" | tail -n 1 | sed -E 's/^\([^)]*\): //; s/ [0-9:.]+: / /')
  during="the run"
  if [ -s "$tmp/died-during" ]; then during=$(paste -sd '|' "$tmp/died-during" | sed 's/|/, or (alongside) /g'); fi
  echo "with-keyring: gnome-keyring-daemon died during ${during} (${how}${last:+: $last}); the keychain tests after it fail: nothing restarts it" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
INNER
)
exec dbus-run-session --config-file="$config" -- bash -c "$inner" with-keyring "$@"
