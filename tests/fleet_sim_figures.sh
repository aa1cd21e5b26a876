# Sourced by the fleet simulator's tests: checks figures of one scenario's line
# ("fleet NAME: key value unit, ..."), held in $line. `check NAME OP VALUE` counts a
# figure that is missing or fails `value OP VALUE` in $failures.
figure() { sed -n "s/.*[:,] $1 \([-0-9.]*\).*/\1/p" <<<"$line"; }
failures=0
check() {  # NAME OP VALUE
  local v
  v=$(figure "$1")
  if [ -z "$v" ] || ! awk -v v="$v" -v w="$3" "BEGIN { exit !(v $2 w) }"; then
    echo "FAIL: $1 is '${v}', want $2 $3"
    failures=$((failures + 1))
  fi
}
