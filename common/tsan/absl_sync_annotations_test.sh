#!/usr/bin/env bash
# Runs tsan_probe under ThreadSanitizer: the unsynchronized write must be
# reported, and nothing synchronized through absl::Mutex, CondVar or
# Notification may be. Only meaningful under --config=tsan (tagged manual;
# tools/test runs it there).
set -uo pipefail
probe="$1"
export TSAN_OPTIONS="exitcode=66 halt_on_error=0"
failed=0

out=$("$probe" race 2>&1); rc=$?
if [ "$rc" -eq 66 ] && grep -q 'WARNING: ThreadSanitizer: data race' <<<"$out"; then
  echo "ok   race: reported"
else
  echo "FAIL race: exit $rc, expected 66 and a data race report (is this a tsan build?)"
  echo "$out" | tail -20
  failed=1
fi

for mode in mutex reader lock_when await condvar notification notified_flag; do
  out=$("$probe" "$mode" 2>&1); rc=$?
  if [ "$rc" -eq 0 ] && ! grep -q 'ThreadSanitizer' <<<"$out"; then
    echo "ok   $mode: nothing reported"
  else
    echo "FAIL $mode: exit $rc"
    echo "$out" | head -60
    failed=1
  fi
done
exit "$failed"
