#!/usr/bin/env bash
# Silicon for what column order costs at the DRAM: space.cu's group pages (points 873-890: 64 B x
# 256 boxes at row pitches of 256 B to 64 KB in both orders, and 32 B x 256 column streams at two
# pitches with and without 128B promotion; 768 rows in flight per SM, where no SM runs ahead)
# timed, and ncu's DRAM bytes and L2 sectors for each. Leaves in OUTDIR:
#   space_pages.csv               points 873-890 timed
#   pages_ncu.tgz                 raw ncu CSVs and logs (ncu_space.py turns them into space_pages_traffic.csv)
#   pages_conditions.yaml         GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_pages.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run pages 240 "$@"
build_programs space

first=873
record_smi before
run_family space 90 "$out/space_pages.csv" "$first"
keep_points "$out/space_pages.csv" "$first" $((first + 17))
if [ -n "$ncu_bin" ]; then
  read -r lo hi < <(traffic_range "$first" $((first + 17))) || exit 1
  profile space sp_stream 40 "$lo" "$hi"
else
  say "ncu not found"
fi
write_conditions "space_pages.csv (scripts/silicon/calib/run_pages.sh)" >"$out/pages_conditions.yaml"
archive_ncu pages
say "done"
