#!/usr/bin/env bash
# Builds the libFuzzer harnesses (cmake --preset fuzz: clang, ASan, UBSan, into build-fuzz/),
# makes their seed corpora from the repository (make_corpora.py) and runs each one for a while.
#
#   tests/fuzz/run_fuzzers.sh [--ci | --nightly] [--seconds N] [--jobs N] [--no-build] [HARNESS...]
#
#   --ci        (default) 18 s per harness, from the seeds alone: about 90 s for all 8 on 2 cores
#   --nightly   600 s per harness; the corpus grows across runs in build-fuzz/fuzz-work/corpus/
#   --seconds N time per harness (overrides the mode's)
#   --jobs N    harnesses run at once (default: 2, at most the number of cores)
#   --no-build  use the harnesses already in build-fuzz/
#   HARNESS     golden_case scenario arch_config validation descriptor_codec driver_descriptor
#               reference_engine trace (default: all)
#
# Prints, per harness, the inputs it ran and whether it crashed, and writes the same table to
# build-fuzz/fuzz-work/summary.txt. Exit status 1 when a harness found something: its input is in
# build-fuzz/fuzz-work/artifacts/HARNESS/; replay it with build-fuzz/tests/fuzz/fuzz_HARNESS FILE,
# fix the bug, and commit the input under tests/fuzz/regressions/HARNESS/ (ctest replays it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mode=ci seconds= jobs=2 build=1 harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) mode=ci ;;
    --nightly) mode=nightly ;;
    --seconds) seconds=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_fuzzers: unknown option $1" >&2; exit 2 ;;
    *) harnesses+=("$1") ;;
  esac
  shift
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(golden_case scenario arch_config validation descriptor_codec driver_descriptor reference_engine trace)
[ -n "$seconds" ] || { [ "$mode" = nightly ] && seconds=600 || seconds=18; }
cores=$(nproc)
[ "$jobs" -le "$cores" ] || jobs=$cores

if ! command -v clang++ >/dev/null; then
  echo "run_fuzzers: clang++ is missing (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
build_dir=$root/build-fuzz
if [ $build -eq 1 ]; then
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j"$cores"
fi
work=$build_dir/fuzz-work
mkdir -p "$work"
python3 "$root/tests/fuzz/make_corpora.py" "$work" "$build_dir/tests/fuzz/fuzz_make_seeds"

# Input length limits: the binary layouts are short; YAML seeds are at most a few KB.
max_len() {
  case "$1" in
    descriptor_codec) echo 128 ;;
    driver_descriptor) echo 136 ;;
    validation|reference_engine) echo 256 ;;
    *) echo 8192 ;;
  esac
}

run_one() {
  local name=$1 corpus
  if [ "$mode" = nightly ]; then
    corpus=$work/corpus/$name
  else
    corpus=$work/ci-corpus/$name
    rm -rf "$corpus"
  fi
  mkdir -p "$corpus" "$work/artifacts/$name" "$work/logs"
  local dict=()
  [ -f "$work/dict/$name.dict" ] && dict=(-dict="$work/dict/$name.dict")
  local rc=0
  "$build_dir/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 \
    -max_len="$(max_len "$name")" -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$work/artifacts/$name/" "$corpus" "$work/seeds/$name" \
    >"$work/logs/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$work/logs/$name.rc"
}

echo "run_fuzzers: $mode, ${seconds} s per harness, $jobs at a time: ${harnesses[*]}"
rm -f "$work"/logs/*.rc
start=$(date +%s)
running=0
for h in "${harnesses[@]}"; do
  [ -x "$build_dir/tests/fuzz/fuzz_$h" ] || { echo "run_fuzzers: no harness fuzz_$h" >&2; exit 2; }
  if [ $running -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  run_one "$h" &
  running=$((running + 1))
done
wait || true
elapsed=$(( $(date +%s) - start ))

failed=0
{
  printf '%-18s %12s %10s %8s  %s\n' harness inputs exec/s seconds result
  for h in "${harnesses[@]}"; do
    log=$work/logs/$h.log
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    rc=$(cat "$work/logs/$h.rc" 2>/dev/null || echo '?')
    if [ "$rc" = 0 ]; then result="no crash"; else result="FOUND A CRASH (exit $rc), log $log"; failed=1; fi
    printf '%-18s %12s %10s %8s  %s\n' "$h" "${runs:-?}" "${rate:-?}" "$seconds" "$result"
  done
  echo "total wall time ${elapsed} s, $jobs at a time, on $(nproc) cores ($(uname -m))"
} | tee "$work/summary.txt"
if [ $failed -ne 0 ]; then
  for h in "${harnesses[@]}"; do
    [ "$(cat "$work/logs/$h.rc")" = 0 ] && continue
    echo "---- $h (last lines of $work/logs/$h.log)"
    tail -n 40 "$work/logs/$h.log"
    ls -1 "$work/artifacts/$h/"
  done
fi
exit $failed
