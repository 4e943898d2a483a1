#!/usr/bin/env bash
# The README's test command runs this: the whole suite inside a private D-Bus session with a fresh gnome-keyring
# (when the tools are installed), so the keychain tests talk to a real Secret Service and never to the user's own.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
status=0
bash scripts/with-keyring.sh npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json "$@" || status=$?
# One plain closing line that any CI log reader understands.
node -e '
  const r = JSON.parse(require("fs").readFileSync(".tmp/vitest.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  // A file whose setup throws fails without failing a test: it must still show here.
  const broken = r.testResults.filter((f) => f.status === "failed" && f.assertionResults.every((a) => a.status !== "failed")).length;
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : "") + (broken ? `; ${broken} test files failed to run` : ""));
' 2>/dev/null || true
exit "$status"
