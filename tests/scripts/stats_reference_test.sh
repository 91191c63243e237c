#!/usr/bin/env bash
# The statistics of every shipped scenario (configs/scenarios/*.yaml) and of a few variants that
# take other paths of the model (waves of CTAs, reductions, a dirty or warm L2 at launch, multicast
# waves, lines of eight sectors),
# compared byte for byte with the files in tests/stats_reference/. They were written by the model
# before any of the speed work of issue 17: a change that only makes the simulator faster (a pure
# speed change) must leave every one of them identical.
#
#   stats_reference_test.sh TMA_SIM ROOT            compare (exit 1 on any difference)
#   stats_reference_test.sh TMA_SIM ROOT --update   write the references anew (a model change that
#                                                   changes statistics on purpose; say so in its commit)
#
# Each run is `tma-sim run ROOT/configs/scenarios/...` with --no-scoreboard (the scoreboard tests
# run elsewhere) and --stats NAME.json in a temporary folder; the absolute paths in the file (the
# scenario's and the architecture file's) are written as ROOT/.
# The statistics JSON has no host-time field (tests/scripts/determinism.sh relies on it too).
set -euo pipefail
sim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$2" && pwd)
update=${3:-}
ref="$root/tests/stats_reference"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"

fail=0
count=0
# check NAME SCENARIO [ARG...]: one case.
check() {
  local name=$1 scenario=$2
  shift 2
  if ! (cd "$out" && "$sim" run "$root/$scenario" --quiet --no-scoreboard --stats "$name.json" "$@" >"$name.txt" 2>&1); then
    echo "FAILED to run: $name ($scenario $*)"
    tail -n 5 "$out/$name.txt"
    fail=1
    return
  fi
  sed -i "s#\"$root/#\"ROOT/#g" "$out/$name.json"
  count=$((count + 1))
  if [ "$update" = "--update" ]; then
    mkdir -p "$ref"
    cp "$out/$name.json" "$ref/$name.json"
    echo "written: $name"
  elif cmp -s "$out/$name.json" "$ref/$name.json"; then
    echo "same: $name"
  else
    echo "DIFFERENT: $name (tests/stats_reference/$name.json)"
    diff <(tr ',' '\n' <"$ref/$name.json") <(tr ',' '\n' <"$out/$name.json") | head -n 20 || true
    fail=1
  fi
}

for f in configs/scenarios/*.yaml; do check "$(basename "$f" .yaml)" "$f"; done
check gemm_bf16_swizzle8_waves configs/scenarios/gemm_bf16.yaml --set "workload.schedule={swizzle: 8, persistent: false}"
check gemm_multicast_waves configs/scenarios/gemm_multicast.yaml --set sms=8 --set "workload.schedule={persistent: false, raster: m}"
check stream_store_reduce configs/scenarios/stream_store.yaml --set workload.reduce=add \
  --set workload.tile_order=column_major --set workload.passes=2
check stream_tiles_dirty_l2 configs/scenarios/stream_tiles.yaml --set l2_state=dirty --set workload.max_tiles_per_sm=64
check stream_tiles_warm_l2 configs/scenarios/stream_tiles.yaml --set l2_state=warm --set workload.max_tiles_per_sm=32
# Lines of eight 16-byte sectors (the L2 keeps the ready cycles of sectors 4-7 apart).
check gemm_bf16_16B_sectors configs/scenarios/gemm_bf16.yaml --set sms=16 --arch-set l2.sector_bytes=16 \
  --arch-set l2.fetch_granularity_bytes=64
check stream_store_reduce_16B_sectors configs/scenarios/stream_store.yaml --set workload.reduce=add \
  --arch-set l2.sector_bytes=16 --arch-set l2.fetch_granularity_bytes=64
echo "$count runs, $([ $fail = 0 ] && echo "all identical" || echo "some differ or failed")"
exit $fail
