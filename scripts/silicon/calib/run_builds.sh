#!/usr/bin/env bash
# Silicon for how fast each build of space.cu that measured a data file issues its loads. A stream of
# 256 B tiles (space.cu point 0: 16 B x 16, 4 stages, one CTA per SM) is bound by the producer
# thread's time from one load to the next, which depends on the compiled loop: builds that differ
# only by branches never taken in the run (sync_every, tile_log) issue a load every 337, 414 or
# 449 cycles (roundtrip.cu's stamps show the producer, not the copy or the consumer, sets it). The
# model takes that time as the kernel's workload.issue_cycles (heldout_space.py). Leaves in OUTDIR:
#   space_builds.csv             build (space.cu blob), data files, point, GB/s, ns and cycles a tile
#   space_builds_conditions.yaml GPU, clocks, versions, the run's log
#
# usage: bash scripts/silicon/calib/run_builds.sh prepare SRCDIR   (where the git history is: one
#          folder per distinct space.cu + calib_common.cuh of the commits that added the data files)
#        bash scripts/silicon/calib/run_builds.sh run SRCDIR OUTDIR [BUDGET_S]   (on the GPU machine)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# The commit that added each space data file (GPU/file), whose space.cu measured it.
commits="e8fe486:h100/space.csv a9238f2:h100/space_fills.csv 5f9360a:h100/space_load.csv
5230354:h100/space_inflight.csv 82b272f:h100/space_sync.csv 63e78e6:h100/space_hits.csv+h200/space_hits.csv
f141d12:h100/space_onset.csv+h200/space_onset.csv b84aa3a:h100/space_pages.csv+h200/space_pages.csv
c7a88d9:h100/space_startup.csv+h200/space_startup.csv e60067a:h200/space.csv 9dba5e6:h200/space_fills.csv
6de51c3:h200/space_inflight.csv a5eea3e:h200/space_sync.csv"
if [ "${1:-}" = prepare ]; then
  [ $# -eq 2 ] || { echo "usage: run_builds.sh prepare SRCDIR" >&2; exit 2; }
  mkdir -p "$2" || exit 2
  . "$here/run_lib.sh"
  for cf in $commits; do
    d=$(source_at "$2" "${cf%%:*}" space "" .) || exit 1
    echo "${cf#*:}" | tr '+' '\n' >>"$d/files"
  done
  ls "$2"
  exit 0
fi
[ "${1:-}" = run ] && [ $# -ge 3 ] || { echo "usage: run_builds.sh run SRCDIR OUTDIR [BUDGET_S]" >&2; exit 2; }
src=$(cd "$2" && pwd)
shift 2
. "$here/run_lib.sh"
start_run builds 300 "$@"
build_programs
for d in "$src"/*/; do
  (cd "$d" && nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/bin/space_$(basename "$d")" space.cu -lcuda \
    >"$work/logs/build_$(basename "$d").log" 2>&1) &
done
wait
say "built $(ls "$work/bin" | grep -c space_) builds"
record_smi before
echo "build,data_files,point,inner_bytes,rows,stages,span_gbps,ns_per_tile,cycles_per_tile,sm_mhz" >"$out/space_builds.csv"
for rep in 1 2; do
  for d in "$src"/*/; do
    b=$(basename "$d")
    for p in 0 8; do
      rm -f "$work/one.csv"
      timeout 60 "$work/bin/space_$b" --out "$work/one.csv" --only "$p" >>"$work/logs/space_$b.log" 2>&1
      # columns by name: the builds' CSVs differ in their later columns
      awk -F, -v b="$b" -v files="$(paste -sd+ "$d/files")" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i }
        NR > 1 { g = $c["span_gbps"]; t = $c["tile_bytes"] * $c["grid"] / g; printf "%s,%s,%s,%s,%s,%s,%s,%.1f,%.0f,%s\n",
          b, files, $c["point"], $c["inner_bytes"], $c["rows"], $c["stages"], g, t, t * $c["sm_mhz"] / 1000, $c["sm_mhz"] }' \
        "$work/one.csv" >>"$out/space_builds.csv"
    done
  done
  say "repetition $rep done"
done
write_conditions "space_builds.csv (scripts/silicon/calib/run_builds.sh)" >"$out/space_builds_conditions.yaml"
say "done"
