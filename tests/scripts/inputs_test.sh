#!/usr/bin/env bash
# Bad input files on the command line (docs/scenarios.md, docs/sweeps.md, docs/regressions.md):
# a sweep or regression with a bad scenario override stops before anything runs (exit 2, no run
# folder, the file, line, field and the value as written), with or without --dry-run; a workload
# that does not fit its tensors is exit 2; more SMs than the architecture has warns.
set -uo pipefail
sim=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# refused FILE.yaml EXPECTED-TEXT COMMAND...: exit 2, no run folder, EXPECTED-TEXT in the error.
refused() {
  local text=$1
  shift
  rm -rf "$work/runs"
  timeout 120 "$sim" "$@" --out "$work/runs" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" = 2 ] || fail "tma-sim $* exited $rc, expected 2: $(cat "$work/err")"
  [ ! -e "$work/runs" ] || fail "tma-sim $* made a run folder"
  grep -qF -- "$text" "$work/err" || fail "tma-sim $*: '$text' not in: $(cat "$work/err")"
}

cat > "$work/sweep.yaml" <<EOF
name: bad
scenario: $root/configs/scenarios/gemm_bf16.yaml
set: {sms: 1, workload.m: 256, workload.n: 256}
parameters:
  - name: promotion
    set: descriptors.A_tile.l2_promotion
    values: [none, 256C]
EOF
want="sweep.yaml:7: field 'parameters[0].values[1]': point 1-256C: override 'descriptors.A_tile.l2_promotion=256C'"
refused "$want" sweep "$work/sweep.yaml"
refused "got '256C'" sweep "$work/sweep.yaml" --dry-run
sed -i 's/descriptors.A_tile.l2_promotion$/descriptors.NOPE.l2_promotion/; s/256C/256B/' "$work/sweep.yaml"
refused "the scenario has no 'descriptors.NOPE'" sweep "$work/sweep.yaml"

: >"$work/empty.yaml"
sed -i "s|^scenario: .*|scenario: $work/empty.yaml|" "$work/sweep.yaml"
refused "sweep.yaml:2: field 'scenario': point 0-none: scenario $work/empty.yaml:1: the file is empty" sweep "$work/sweep.yaml"

cat > "$work/reg.yaml" <<EOF
lists:
  a:
    tests:
      - {name: ok, selftest: pass}
      - name: negative
        scenario: $root/configs/scenarios/stream_tiles.yaml
        set: {sms: -4}
EOF
refused "reg.yaml:7: field 'lists.a.tests[1].set.sms': override 'sms=-4'" regress "$work/reg.yaml"
refused "value -4 is outside the allowed range [1, 1024]" regress "$work/reg.yaml" --dry-run

# A workload over more than its tensor: exit 2, the field and both numbers.
"$sim" run "$root/configs/scenarios/gemm_bf16.yaml" --set workload.m=100000 >/dev/null 2>"$work/err"
rc=$?
[ "$rc" = 2 ] || fail "gemm m=100000 over 2048 rows exited $rc, expected 2"
grep -qF "field 'workload.m': m = 100000 is beyond the end of tensor 'A' (dims[1] = 2048) (set by the override 'workload.m=100000')" \
  "$work/err" || fail "gemm m=100000: $(cat "$work/err")"

# --arch-set sm_count acts: a scenario on more SMs than the architecture has warns.
small=(--set sms=4 --set workload.m=256 --set workload.n=256 --no-scoreboard --quiet)
"$sim" run "$root/configs/scenarios/gemm_bf16.yaml" "${small[@]}" --arch-set sm_count=2 >/dev/null 2>"$work/err" ||
  fail "sm_count=2 run failed: $(cat "$work/err")"
grep -qF "tma-sim: warning: scenario 'gemm_bf16' runs on 4 SMs, more than the 2 of architecture 'h100'" "$work/err" ||
  fail "no warning for sms above sm_count: $(cat "$work/err")"
"$sim" run "$root/configs/scenarios/gemm_bf16.yaml" "${small[@]}" >/dev/null 2>"$work/err"
[ ! -s "$work/err" ] || fail "a warning without cause: $(cat "$work/err")"

[ "$failures" = 0 ] || { echo "$failures failures"; exit 1; }
echo "inputs: OK"
