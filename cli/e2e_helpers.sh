# Sourced by jobsetctl's end-to-end tests (bash, with $jobsetctl set and $tmp
# a scratch directory): a real jobsetd on 127.0.0.1 and checks of what
# jobsetctl prints. Counts failures in $failures.
failures=0

# start_jobsetd JOBSETD: starts it on a port chosen at run time with its data
# in $tmp/data, stopped when the test exits; sets $address and JOBSETCONFIG
# (TLS and the administrator's token from the admin.conf jobsetd wrote).
start_jobsetd() {
  "$1" --listen=127.0.0.1:0 --data_dir="$tmp/data" --fsync=false \
    >"$tmp/jobsetd.out" 2>"$tmp/jobsetd.err" &
  jobsetd_pid=$!
  trap 'kill "$jobsetd_pid" 2>/dev/null; wait "$jobsetd_pid" 2>/dev/null' EXIT
  for _ in $(seq 1 200); do
    grep -q '^jobsetd serving on ' "$tmp/jobsetd.out" && break
    sleep 0.1
  done
  address=$(sed -n 's/^jobsetd serving on \([^ ]*\) .*/\1/p' "$tmp/jobsetd.out")
  if [ -z "$address" ]; then
    echo "jobsetd did not start:"; cat "$tmp/jobsetd.out" "$tmp/jobsetd.err"
    exit 1
  fi
  export JOBSETCONFIG=$tmp/data/admin.conf
}

# run WANT_RC CMD...: runs jobsetctl, keeps stdout in $out and stderr in $err.
run() {
  local want=$1; shift
  out=$("$jobsetctl" "$@" 2>"$tmp/stderr")
  local rc=$?
  err=$(cat "$tmp/stderr")
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: jobsetctl $*: exit $rc, want $want"
    echo "  stdout: $out"; echo "  stderr: $err"
    failures=$((failures + 1))
  fi
}

# expect WHERE TEXT: $out or $err (WHERE) contains TEXT.
expect() {
  local text
  if [ "$1" = out ]; then text=$out; else text=$err; fi
  if ! grep -qF -- "$2" <<<"$text"; then
    echo "FAIL: expected std$1 to contain '$2', got:"; echo "$text"
    failures=$((failures + 1))
  fi
}

# expect_not WHERE TEXT: $out or $err (WHERE) does not contain TEXT.
expect_not() {
  local text
  if [ "$1" = out ]; then text=$out; else text=$err; fi
  if grep -qF -- "$2" <<<"$text"; then
    echo "FAIL: expected std$1 not to contain '$2', got:"; echo "$text"
    failures=$((failures + 1))
  fi
}

# expect_exactly TEXT: $out is TEXT.
expect_exactly() {
  if [ "$out" != "$1" ]; then
    echo "FAIL: expected stdout:"; echo "$1"; echo "got:"; echo "$out"
    failures=$((failures + 1))
  fi
}
