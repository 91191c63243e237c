#!/usr/bin/env bash
# Silicon for reads that hit and reads that miss under load: partition.cu's re-read points (pairs of
# SMs: A loads 32-byte x 256-row boxes from DRAM, B loads a sector of the same lines 0-8 us after A
# issued each box; 0, 4 or 10 stages of background streams on the other SMs), timed without ncu
# (under ncu the kernel runs about 40 times slower: run_partition.sh). a_lat_cycles and
# b_lat_cycles are each box's issue-to-data time, averaged over the pair's 32 boxes and 8 pairs.
# Leaves in OUTDIR:
#   reread_timed.csv            the 180 points (relation, sector, promotion, delay, background)
#   reread_conditions.yaml      GPU, clocks, versions, timings
#   reread_logs.tgz             logs
#
# usage: bash scripts/silicon/calib/run_reread.sh OUTDIR [MAP] [BUDGET_S]
#   MAP: the GPU's partition map (partition_map.csv from run_partition.sh); by default the one
#   committed for this GPU (tests/calibration/{h100,h200}/partition_map.csv, by its name).
set -u
[ $# -ge 1 ] || { echo "usage: run_reread.sh OUTDIR [MAP] [BUDGET_S]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
map=${2:-}
if [ -z "$map" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case "$gpu" in
    *H200*) map="$here/../../../tests/calibration/h200/partition_map.csv" ;;
    *) map="$here/../../../tests/calibration/h100/partition_map.csv" ;;
  esac
fi
start_args=("$1" "${3:-}")
. "$here/run_lib.sh"
start_run reread 240 "${start_args[@]}"
build_programs partition

record_smi before
say "map: $map"
timeout -k 5 $(($(left) - 20)) "$work/bin/partition" --out "$out/reread_timed.csv" --map "$map" \
  >"$work/logs/reread.log" 2>"$work/logs/reread.err"
say "re-read points timed: rc $?, $(($(wc -l <"$out/reread_timed.csv") - 1)) rows"
write_conditions "reread_timed.csv (scripts/silicon/calib/run_reread.sh)" "map=$map" >"$out/reread_conditions.yaml"
tar czf "$out/reread_logs.tgz" -C "$work" logs
say "done"
