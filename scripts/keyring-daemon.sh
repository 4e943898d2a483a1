#!/usr/bin/env bash
# The Secret Service of scripts/with-keyring.sh, started by D-Bus activation on the first call to
# org.freedesktop.secrets, and again on the first call after it died, as a desktop's session bus or systemd does.
# It runs gnome-keyring over the run's private directories, unlocked with the run's password, so a daemon started
# again finds the records the last one stored.
#
#   keyring-daemon.sh <dir>
#
# Each daemon logs to <dir>/daemon-<its pid>.log and writes its pid to <dir>/daemon.pid. When it ends, one line is
# added to <dir>/daemon.exits: "<exit status> <ms since the epoch> <pid> <race|other> <its last error line>", where
# "race" marks gnome-keyring's own crash on a caller that left while it opened that caller's session (the
# assertion below, then a GLib error on the reply it builds from nothing). See CONTRIBUTING.md.
set -u
dir=$1
export XDG_DATA_HOME="$dir/data" XDG_RUNTIME_DIR="$dir/runtime"
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

log="$dir/daemon-$$.log"
gnome-keyring-daemon --foreground --unlock --components=secrets < <(printf "%s" "idcli-test-keyring") >"$log" 2>&1 &
daemon=$!
mv "$log" "$dir/daemon-$daemon.log" # named after the daemon, whose pid the tests know
log="$dir/daemon-$daemon.log"
echo "$daemon" >"$dir/daemon.pid.new"
mv "$dir/daemon.pid.new" "$dir/daemon.pid"
# D-Bus ends the activation by stopping this script; the daemon stops with its bus, and is recorded all the same.
trap 'kill "$daemon" 2>/dev/null' TERM HUP INT
wait "$daemon"
status=$?
while kill -0 "$daemon" 2>/dev/null; do wait "$daemon"; status=$?; done

kind=other
if grep -q "gkd_secret_service_get_pkcs11_session: assertion 'client' failed" "$log"; then kind=race; fi
last=$(grep -E "ERROR|CRITICAL|WARNING" "$log" | tail -n 1 | sed -E 's/^\([^)]*\): //; s/ [0-9:.]+: / /')
echo "$status $(date +%s%3N) $daemon $kind $last" 2>/dev/null >>"$dir/daemon.exits"
