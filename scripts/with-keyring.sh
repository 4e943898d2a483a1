#!/usr/bin/env bash
# Run a command inside a private D-Bus session with a fresh, unlocked gnome-keyring Secret Service, so keychain
# tests exercise the real OS keychain without touching (or being blocked by) the user's own login keyring.
#
#   scripts/with-keyring.sh npx vitest run test/store
#
# Inside, IDCLI_TEST_KEYRING=1 tells the tests a real keyring is there, and IDCLI_TEST_KEYRING_DIR where the
# daemons' exits are recorded (see test/support/keyring-watch.ts). The exit status is the command's, or 1 when the
# command passed but the daemon died under it other than by gnome-keyring's known crash (see keyring-daemon.sh).
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

# The run's private directory: the keyring's data and runtime dirs, the daemons' logs and exits, and the session
# bus's configuration, which is test/support/dbus-session.conf plus one service: the Secret Service, started on
# demand by scripts/keyring-daemon.sh over these directories. A daemon that dies under the tests is so started again
# on the next call, as on a desktop, instead of failing every keychain test after it; its death is still reported.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/idcli-keyring.XXXXXX")"
chmod 700 "$tmp"
trap 'rm -rf "$tmp"' EXIT
# Neither path is written into these files, where a space, quote, '&', '|' or newline in it would break them: the
# service directory is named relative to the configuration, and the service finds the script and the directory in
# the environment, which the bus hands on to what it starts.
mkdir "$tmp/services"
printf '%s\n' '[D-BUS Service]' 'Name=org.freedesktop.secrets' \
  "Exec=/bin/bash -c 'exec /bin/bash \"\$IDCLI_KEYRING_DAEMON\" \"\$IDCLI_KEYRING_RUN_DIR\"'" \
  >"$tmp/services/org.freedesktop.secrets.service"
sed 's|</busconfig>|  <servicedir>services</servicedir>\n</busconfig>|' "$here/../test/support/dbus-session.conf" \
  >"$tmp/session.conf"

# The inner script runs inside the private session (a quoted heredoc, so nothing expands out here); the command
# arrives as "$@" (after a shift), so arguments with spaces or quotes pass through untouched.
inner=$(cat <<'INNER'
set -uo pipefail
shift
tmp=$IDCLI_KEYRING_RUN_DIR
unset IDCLI_KEYRING_RUN_DIR IDCLI_KEYRING_DAEMON
echo "$$" >"$tmp/session.started"
# The daemon is D-Bus's child, not this script's: it is stopped by its pid, and waited for until keyring-daemon.sh
# has recorded its exit, the last thing written in $tmp before it is removed. One stuck in a system call (a read
# that never returns) outlives SIGTERM, and would outlive the run: it is killed.
recorded() {
  local _
  for _ in $(seq 1 "$2"); do grep -qs "^[0-9]* [0-9]* $1 " "$tmp/daemon.exits" && return 0; sleep 0.05; done
  return 1
}
cleanup() {
  local pid
  pid=$(cat "$tmp/daemon.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null
  recorded "$pid" 40 && return 0
  kill -KILL "$pid" 2>/dev/null
  recorded "$pid" 100
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM

# A fresh data dir means a fresh "login" keyring created with the daemon's password, so it starts unlocked; an
# existing login keyring would stay locked and every call would wait for a prompt nobody answers. A fresh runtime
# dir too: gnome-keyring looks for a running daemon through $XDG_RUNTIME_DIR/keyring/control and would hand the
# work to the desktop's daemon instead of starting a private one.
export XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/runtime"
if ! timeout 10 dbus-send --session --print-reply --reply-timeout=10000 --dest=org.freedesktop.DBus \
  /org/freedesktop/DBus org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null; then
  echo "with-keyring: gnome-keyring did not take org.freedesktop.secrets within 10 s" >&2
  cat "$tmp"/daemon-*.log 2>/dev/null | sed "s/^/with-keyring: /" >&2
  exit 1
fi

export IDCLI_TEST_KEYRING=1 IDCLI_TEST_KEYRING_DIR="$tmp"
"$@"
status=$?
# Each death of the daemon in one line, with the tests it died under (test/support/keyring-watch.ts). gnome-keyring's
# crash on a caller killed while it opened a session (the tests kill CLIs at any point) is its own bug, reported;
# any other death fails the run.
pid=$(cat "$tmp/daemon.pid")
if ! kill -0 "$pid" 2>/dev/null; then # a death at the very end: its record is on its way
  recorded "$pid" 100
fi
if [ -s "$tmp/daemon.exits" ]; then
  while read -r code at _ kind last; do
    how="exit status $code"
    if [ "$code" -gt 128 ]; then how="killed by SIG$(kill -l "$((code - 128))")"; fi
    during=$(grep -s "^$at " "$tmp/died-during" | cut -d' ' -f2- | paste -sd '|' | sed 's/|/, or (alongside) /g')
    what="gnome-keyring-daemon died during ${during:-the run} (${how}${last:+: $last}); D-Bus starts another on the next call"
    if [ "$kind" = race ]; then
      echo "with-keyring: $what; gnome-keyring's crash on a caller that left while it opened the caller's session" >&2
    else
      echo "with-keyring: $what; the run fails" >&2
      [ "$status" -ne 0 ] || status=1
    fi
  done <"$tmp/daemon.exits"
fi
exit "$status"
INNER
)
# What the bus logs (each activation, its fd limit) goes to bus.log; the command keeps this script's stderr (fd 3).
# A session that never started (a configuration the bus refused) says why from there.
# dbus-run-session passes on no signal: one sent to this script alone (SIGTERM from a CI timeout, SIGHUP) goes to
# what the inner script runs, whose end stops the daemon and the bus as usual; this script waits for that before it
# removes the directory. A Ctrl-C reaches every process of the terminal's group already.
signalled=0
forward() {
  local inner
  signalled=$2
  inner=$(cat "$tmp/session.started" 2>/dev/null) && pkill "-$1" -P "$inner" || true # gone already: a signal to the group
}
trap 'forward TERM 143' TERM
trap 'forward HUP 129' HUP
trap : INT
(
  trap - INT QUIT
  IDCLI_KEYRING_RUN_DIR="$tmp" IDCLI_KEYRING_DAEMON="$here/keyring-daemon.sh" exec \
    dbus-run-session --config-file="$tmp/session.conf" -- \
    bash -c 'exec 2>&3 3>&-; eval "$1"' with-keyring "$inner" "$@"
) <&0 3>&2 2>>"$tmp/bus.log" &
session=$!
status=0
wait "$session" || status=$?
while kill -0 "$session" 2>/dev/null; do
  status=0
  wait "$session" || status=$?
done
# A signal to the whole group ends dbus-run-session at once, while the inner script still stops the daemon and waits
# for its record: the directory is removed once that script is gone.
# (A zombie counts as gone: the script's parent has ended, and init may be slow to reap it.)
if started=$(cat "$tmp/session.started" 2>/dev/null); then
  for _ in $(seq 1 300); do
    state=$(ps -o stat= -p "$started") && [ "${state:0:1}" != Z ] || break
    sleep 0.05
  done
fi
if [ "$signalled" -ne 0 ] && [ "$status" -le 128 ]; then status=$signalled; fi
if [ ! -e "$tmp/session.started" ]; then
  echo "with-keyring: the private D-Bus session did not start (exit status $status)" >&2
  sed "s/^/with-keyring: /" "$tmp/bus.log" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
