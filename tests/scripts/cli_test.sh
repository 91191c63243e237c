#!/usr/bin/env bash
# The tma-sim command line (README "Running it"): every numeric option of every command parses
# strictly (a bad value is exit 2 with the option and the value, never a hang or a crash);
# --version; help and --help for every command and subcommand, with usage lines that list every
# option; one error style ("tma-sim: error: ..."); --arch-set on check and random as on run.
set -uo pipefail
sim=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

scenario=$root/configs/scenarios/gemm_bf16.yaml
golden=$root/tests/golden/silicon/t0001.yaml
small=(--set sms=1 --set workload.m=128 --set workload.n=128 --set workload.k=64 --no-scoreboard --quiet)

# expect_error RC_WANTED "PART OF THE FIRST STDERR LINE" tma-sim ARGS...: runs with a time limit
# (a hang is a failure), checks the status and that stderr's first line is an error naming PART.
expect_error() {
  local want=$1 part=$2
  shift 2
  timeout 60 "$sim" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  local first
  first=$(head -1 "$work/err")
  if [ "$rc" != "$want" ]; then
    fail "tma-sim $* exited $rc, expected $want (stderr: $first)"
  elif [[ "$first" != "tma-sim: error: "* ]]; then
    fail "tma-sim $*: first stderr line is not 'tma-sim: error: ...': $first"
  elif [[ "$first" != *"$part"* ]]; then
    fail "tma-sim $*: '$part' not in: $first"
  fi
}

# ---- strict numbers: every numeric option of every command ----
for v in abc -1 0 " 5" 5x 1.5 99999999999999999999999; do
  expect_error 2 "--vcd-sample: expected a whole number in [1, 4294967295], got '$v'" \
    run "$scenario" "${small[@]}" --vcd "$work/x.vcd" --vcd-sample "$v"
done
for v in abc 0 -2 2.5 ""; do
  expect_error 2 "--jobs: expected a whole number in [1, 1024], got '$v'" regress x.yaml --jobs "$v"
  expect_error 2 "--jobs: expected a whole number in [1, 1024], got '$v'" sweep x.yaml --jobs "$v"
done
for v in abc -1 1e3 18446744073709551616; do
  expect_error 2 "--seed: expected a whole number" regress x.yaml --seed "$v"
  expect_error 2 "--seed: expected a whole number" random --seed "$v" --count 1
done
for v in abc 0 -1 1x; do expect_error 2 "--count: expected a whole number in [1, " random --seed 1 --count "$v"; done
expect_error 2 "--start: expected a whole number" random --seed 1 --count 1 --start -3
expect_error 2 "--max-holes: expected a whole number" coverage report --max-holes 10abc x.json
expect_error 2 "--seconds: expected a number" regress-selftest pass --seconds nan
for v in 1 a/2 2/x 0/0 3/2 -1/2 " 0/2"; do
  expect_error 2 "--shard" regress x.yaml --shard "$v"
  expect_error 2 "--shard" sweep x.yaml --shard "$v"
done
# Architecture overrides are numbers too, on every command that takes them.
expect_error 2 "override 'l2.ways=0x1p3': expected a whole number" run "$scenario" "${small[@]}" --arch-set l2.ways=0x1p3
expect_error 2 "override 'sm_clock_mhz=nan': expected a number" run "$scenario" "${small[@]}" --arch-set sm_clock_mhz=nan
# A value that is right is taken (decimal or 0x hexadecimal).
timeout 120 "$sim" run "$scenario" "${small[@]}" --vcd "$work/x.vcd" --vcd-sample 0x40 >/dev/null 2>&1 ||
  fail "--vcd-sample 0x40 refused"
[ -s "$work/x.vcd" ] || fail "--vcd-sample 0x40 wrote no VCD"

# ---- --arch-set on check and random, as on run: applied (an override that breaks a rule across
# fields is refused) and refused where it could not act (the reference engine) ----
for cmd in "check --engine tlm $golden" "random --seed 1 --count 1" "run $scenario ${small[*]}" bench; do
  # shellcheck disable=SC2086
  expect_error 2 "fetch_granularity_bytes must be a power of two" $cmd --arch-set l2.fetch_granularity_bytes=48
  # shellcheck disable=SC2086
  expect_error 2 "no architecture field 'l2.colour'" $cmd --arch-set l2.colour=3
done
expect_error 2 "--arch and --arch-set need --engine tlm" check --arch-set l2.ways=8 "$golden"
expect_error 2 "--arch and --arch-set need --engine tlm" random --seed 1 --count 1 --engine ref --arch-set l2.ways=8
"$sim" check --engine tlm --arch-set l2.ways=8 "$golden" >"$work/out" 2>&1 || fail "check --arch-set l2.ways=8: $(cat "$work/out")"
"$sim" random --seed 1 --count 3 --quiet --arch-set l2.hit_latency=300 >"$work/out" 2>&1 ||
  fail "random --arch-set: $(cat "$work/out")"

# ---- one error style; unknown options and missing values ----
for cmd in check run bench regress regress-merge sweep random "coverage report" "coverage merge" "trace export" regress-selftest; do
  # shellcheck disable=SC2086
  expect_error 2 "unknown" $cmd --no-such-option
done
expect_error 2 "option --arch needs a value" run "$scenario" --arch
expect_error 2 "option --engine needs a value" check "$golden" --engine
mkdir -p "$work/no_cases"
expect_error 2 "no golden cases (*.yaml) under the folders given" check "$work/no_cases"
expect_error 2 "unknown command 'nope'" nope
expect_error 2 "no command 'nope'" help nope
expect_error 2 "unknown coverage command 'mrege'" coverage mrege a.json
expect_error 2 "unknown trace command 'import'" trace import "$scenario"
expect_error 2 "no output given (-o OUT.jsonl)" trace export "$scenario"

# ---- --version ----
want=$(sed -n 's/^project(tma_tlm VERSION \([0-9.]*\) .*/\1/p' "$root/CMakeLists.txt")
[ -n "$want" ] || fail "no project VERSION in CMakeLists.txt"
[ "$("$sim" --version)" = "tma-sim $want" ] || fail "--version printed '$("$sim" --version)', expected 'tma-sim $want'"

# ---- help: every command and subcommand; usage lines list every option of the help text ----
"$sim" help >"$work/main" || fail "tma-sim help exited $?"
for cmd in check run bench regress regress-merge sweep random coverage "coverage merge" "coverage report" trace "trace export" regress-selftest; do
  # shellcheck disable=SC2086
  "$sim" $cmd --help >"$work/a" 2>&1 || fail "tma-sim $cmd --help exited $?"
  # shellcheck disable=SC2086
  "$sim" help $cmd >"$work/b" 2>&1 || fail "tma-sim help $cmd exited $?"
  cmp -s "$work/a" "$work/b" || fail "tma-sim help $cmd differs from tma-sim $cmd --help"
  [[ "$(head -1 "$work/a")" == "usage: tma-sim ${cmd%% *} "* ]] || fail "tma-sim $cmd --help: $(head -1 "$work/a")"
  usage=$(sed '/^$/q' "$work/a")
  for opt in $(grep -oE '^  +--[a-z-]+' "$work/a" | tr -d ' ' | sort -u); do
    [[ "$usage" == *"$opt"* ]] || fail "tma-sim $cmd: the usage lines do not list $opt"
  done
  top=${cmd%% *}
  [ "$top" = regress-selftest ] || grep -q "^  $top" "$work/main" || fail "tma-sim help does not list $top"
done

[ "$failures" = 0 ] || { echo "$failures failures"; exit 1; }
echo "cli: OK"
