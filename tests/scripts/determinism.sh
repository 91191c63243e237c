#!/usr/bin/env bash
# Determinism: the same command run twice, in two processes (so with different address-space
# layouts, heap addresses and hash seeds of pointer-keyed containers), must write the same bytes.
#
#   determinism.sh TMA_SIM ROOT run      tma-sim run of configs/scenarios/gemm_bf16.yaml on 8 SMs at
#                                        small sizes with --stats, --trace and --vcd: the three files
#                                        and the printed summary (less its host-time line)
#   determinism.sh TMA_SIM ROOT check    tma-sim check of tests/golden/silicon, engine ref and tlm:
#                                        printed report and exit status
#   determinism.sh TMA_SIM ROOT random   tma-sim random, seed 7, sm_90 (pipeline) and sm_100 with the
#                                        Blackwell forms (reference): report, coverage, written cases
#   determinism.sh TMA_SIM ROOT regress  tma-sim regress of a small list (passing, failing and crashing
#                                        jobs): statuses, signatures, failure groups, replay commands
#   (exit 77, which ctest reports as skipped, while the command does not exist)
#
# On a difference it prints the first differing lines of each file and exits 1.
set -euo pipefail
sim=$1
root=$2
what=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

# compare NAME: $out/1/NAME against $out/2/NAME
compare() {
  if cmp -s "$out/1/$1" "$out/2/$1"; then
    echo "same: $1 ($(wc -c <"$out/1/$1") bytes)"
  else
    echo "DIFFERENT: $1"
    diff "$out/1/$1" "$out/2/$1" | head -n 20 || true
    fail=1
  fi
}

# Runs "$@" in $out/1 and in $out/2 (same relative file names), stdout to stdout.txt, status to status.txt.
twice() {
  for i in 1 2; do
    mkdir -p "$out/$i"
    (cd "$out/$i" && { "$@" >stdout.txt 2>stderr.txt; echo $? >status.txt; } || true)
  done
}

has_command() {  # whether tma-sim lists the command in its help
  "$sim" --help 2>&1 | grep -qE "^  $1 "
}

case "$what" in
  run)
    twice "$sim" run "$root/configs/scenarios/gemm_bf16.yaml" --quiet --set sms=8 --set workload.m=512 \
      --set workload.n=512 --set workload.k=256 --stats stats.json --trace trace.json --vcd run.vcd
    for i in 1 2; do
      [ "$(cat "$out/$i/status.txt")" = 0 ] || { echo "run $i failed:"; cat "$out/$i/stderr.txt"; exit 1; }
      grep -v '^  host ' "$out/$i/stdout.txt" >"$out/$i/summary.txt"
    done
    for f in stats.json trace.json run.vcd summary.txt; do compare "$f"; done
    ;;
  check)
    for engine in ref tlm; do
      twice "$sim" check --quiet --engine "$engine" "$root/tests/golden/silicon"
      for i in 1 2; do
        cat "$out/$i/stdout.txt" "$out/$i/status.txt" >"$out/$i/check_$engine.txt"
        [ "$(cat "$out/$i/status.txt")" = 0 ] || { echo "check --engine $engine $i failed:"; tail "$out/$i/stdout.txt"; exit 1; }
      done
      compare "check_$engine.txt"
    done
    ;;
  regress)
    # A small regression (golden cases, a scenario, a failing and a crashing job, and a generator
    # when tma-sim has one) run twice: the same statuses, signatures, failure groups and replay
    # commands. Times, logs and run-folder names differ by design and are left out.
    if ! has_command regress; then
      echo "tma-sim has no 'regress' command yet: nothing to compare (skipped)"
      exit 77
    fi
    {
      echo "lists:"
      echo "  d:"
      echo "    tests:"
      echo "      - {name: golden, golden: $root/tests/golden/silicon}"
      echo "      - {name: gemm, scenario: $root/configs/scenarios/gemm_bf16.yaml, set: {sms: 4, workload.m: 256, workload.n: 256}}"
      echo "      - {name: fail, selftest: fail}"
      echo "      - {name: crash, selftest: crash}"
      if has_command random; then echo "      - {name: gen, random: {seed: 7, count: 50, reseed: 2}}"; fi
    } >"$out/d.yaml"
    twice "$sim" regress "$out/d.yaml" --jobs 2 --out runs --quiet
    for i in 1 2; do
      [ "$(cat "$out/$i/status.txt")" = 1 ] || { echo "regress $i: exit $(cat "$out/$i/status.txt"), expected 1"; cat "$out/$i/stderr.txt"; exit 1; }
      run=$(ls -d "$out/$i"/runs/d-*)
      cp "$run/failures.csv" "$out/$i/failures.csv"
      python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(",".join(r[c] for c in ("id", "kind", "status", "exit_code", "signal", "seed", "signature", "first_failing_line")))' \
        "$run/summary.csv" >"$out/$i/jobs.txt"
      grep -v '^reports: ' "$out/$i/stdout.txt" >"$out/$i/regress_stdout.txt"
    done
    for f in failures.csv jobs.txt regress_stdout.txt; do compare "$f"; done
    ;;
  random)
    if ! has_command random; then
      echo "tma-sim has no 'random' command yet: nothing to compare (skipped)"
      exit 77
    fi
    # Both profiles, the pipeline and the reference engine; the written cases and the coverage.
    for i in 1 2; do
      mkdir -p "$out/$i"
      (
        cd "$out/$i"
        "$sim" random --seed 7 --count 150 --coverage cov90.json --write cases90 >random90.txt 2>&1 || echo "exit $?" >>random90.txt
        "$sim" random --seed 7 --count 150 --gpu sm_100 --blackwell-forms --engine ref --coverage cov100.json \
          --write cases100 >random100.txt 2>&1 || echo "exit $?" >>random100.txt
      )
      # Host time lines ("generated in 0.27 s", "ran in 1.15 s") are not part of the result.
      for f in random90.txt random100.txt; do
        grep -vE '^(generated|ran) in [0-9.]+ s$' "$out/$i/$f" >"$out/$i/$f.tmp" && mv "$out/$i/$f.tmp" "$out/$i/$f"
      done
      (cd "$out/$i" && find . -type f ! -name files.txt | LC_ALL=C sort >files.txt)
    done
    compare files.txt
    while read -r f; do compare "${f#./}"; done <"$out/1/files.txt"
    ;;
  *)
    echo "determinism.sh: unknown mode '$what' (run, check, random, regress)" >&2
    exit 2
    ;;
esac
exit $fail
