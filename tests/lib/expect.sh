# The one assertion helper of the shell tests (sourced, not run).
#   expect [--stderr] [--regex] NAME STATUS TEXT COMMAND...
# runs COMMAND and checks its exit status is STATUS and its output (stdout and stderr together;
# with --stderr, stderr alone) contains TEXT (a fixed string; with --regex, a grep basic regular
# expression). Prints "ok: NAME", or "FAIL: NAME" with what was expected and the output's tail.
# The output stays in $expect_output for further checks. `expect_result [--regex] NAME STATUS
# TEXT EXIT OUTPUT` checks a command run by the caller. `expect_summary` prints the counts and
# fails when anything failed.
expect_passed=0
expect_failed=0
expect_output=""

ok() { echo "ok: $1"; expect_passed=$((expect_passed + 1)); }
fail() { echo "FAIL: $1"; expect_failed=$((expect_failed + 1)); }

expect() {
  local stream=all match=""
  while :; do
    case $1 in
      --stderr) stream=stderr; shift ;;
      --regex) match=--regex; shift ;;
      *) break ;;
    esac
  done
  local name=$1 want=$2 text=$3; shift 3
  local status=0
  if [ "$stream" = stderr ]; then
    expect_output=$("$@" 2>&1 >/dev/null) || status=$?
  else
    expect_output=$("$@" 2>&1) || status=$?
  fi
  expect_result ${match} "$name" "$want" "$text" "$status" "$expect_output"
}

expect_result() {
  local match=-F
  if [ "$1" = --regex ]; then match=-G; shift; fi
  local name=$1 want=$2 text=$3 status=$4 output=$5
  if [ "$status" = "$want" ] && grep -q "$match" -- "$text" <<<"$output"; then
    ok "$name"
  else
    fail "$name (exit $status, expected $want and '$text')"
    tail -n 20 <<<"$output"
  fi
}

expect_summary() {
  echo "$expect_passed passed, $expect_failed failed"
  [ "$expect_failed" -eq 0 ]
}
