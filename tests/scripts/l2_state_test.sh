#!/usr/bin/env bash
# The L2's state at launch (scenario field l2_state): a dirty L2 writes its dirty lines back to DRAM
# as the run evicts them, sharing DRAM with the reads (slower); a warm L2 holds what the same
# workload left, so a footprint that fits is served from it and one that does not gains nothing
# (a stream in address order finds only the tail of the previous run, evicted before it is asked
# for), as on silicon (tests/calibration/h100/space.csv). A 4 MB L2 keeps the runs short.
set -euo pipefail
sim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # name rows_of_tensor extra-args...
  local name=$1 rows=$2
  shift 2
  "$sim" run "$root/configs/scenarios/stream_tiles.yaml" --quiet --no-scoreboard --set sms=16 \
    --set workload.max_tiles_per_sm=0 --set "tensors.T.dims=[8192, $rows]" --set descriptors.T_tile.l2_promotion=none \
    --arch-set l2.capacity_bytes=4194304 --arch-set l2.dirty_launch_bytes=2097152 --stats "$out/$name.json" "$@" >/dev/null
}
field() { python3 -c 'import json,sys; print(int(float(json.load(open(sys.argv[1]))["summary."+sys.argv[2]])))' "$out/$1.json" "$2"; }
run clean 1024                          # 16 MB: four times the L2
run dirty 1024 --set l2_state=dirty
run dirty1m 1024 --set l2_state=dirty --set l2_dirty_bytes=1048576
run warm 1024 --set l2_state=warm
run small_clean 64                      # 1 MB: fits, with the near partition's copies of far lines
run small_warm 64 --set l2_state=warm
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2 ($1)"; fail=1; fi; }
check "[ $(field clean dram_write_bytes) -eq 0 ]" "a clean L2 writes nothing back"
# All of it, less the few lines the prefill itself pushed out of over-full sets (the L2 is hashed).
check "[ $(field dirty dram_write_bytes) -ge $((2097152 * 99 / 100)) ] && [ $(field dirty dram_write_bytes) -le 2097152 ]" \
  "a dirty L2 writes back its 2 MB (l2.dirty_launch_bytes) as the run evicts it"
check "[ $(field dirty1m dram_write_bytes) -ge $((1048576 * 99 / 100)) ] && [ $(field dirty1m dram_write_bytes) -le 1048576 ]" \
  "l2_dirty_bytes sets the footprint"
check "[ $(field dirty cycles) -gt $(field clean cycles) ]" "write-backs share DRAM with the reads: dirty is slower"
check "[ $(field dirty dram_read_bytes) -eq $(field clean dram_read_bytes) ]" "write-backs do not change what is read"
check "[ $(field warm dram_read_bytes) -ge $(( $(field clean dram_read_bytes) * 95 / 100 )) ]" \
  "a stream four times the L2 finds nothing of its previous run"
check "[ $(field small_warm dram_read_bytes) -lt $(( $(field small_clean dram_read_bytes) / 10 )) ]" \
  "a footprint that fits is served from a warm L2"
check "[ $(field small_warm cycles) -lt $(field small_clean cycles) ]" "and is faster"
# Bad combinations are refused with the field named.
if "$sim" run "$root/configs/scenarios/stream_tiles.yaml" --set l2_dirty_bytes=4096 --quiet 2>"$out/err"; then
  echo "FAIL: l2_dirty_bytes without l2_state: dirty was accepted"; fail=1
else
  check "grep -q l2_dirty_bytes $out/err" "l2_dirty_bytes without l2_state: dirty is an error naming the field"
fi
if "$sim" run "$root/configs/scenarios/stream_tiles.yaml" --set l2_state=lukewarm --quiet 2>"$out/err"; then
  echo "FAIL: l2_state lukewarm was accepted"; fail=1
else
  check "grep -q 'clean, dirty, warm' $out/err" "an unknown l2_state lists the states"
fi
exit $fail
