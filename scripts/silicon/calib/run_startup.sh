#!/usr/bin/env bash
# Silicon for what a single pass over an L2-resident tensor costs beyond its rate: space.cu's group
# startup (points 891-908: warm 128 B x 64, 64 B x 256 and 32 B x 256 streams over 2-24 MB, and
# clean twins read from DRAM) timed, each CTA's start and end (--cta-times), every tile's issue and
# data time for three of them (--tile-times: 894 warm 128 B x 64 16 MB, 897 warm 64 B x 256 16 MB,
# 905 clean 64 B x 256 16 MB), and ncu's DRAM bytes, L2 sectors and hit rate. Leaves in OUTDIR:
#   space_startup.csv                points 891-908 timed
#   space_startup_cta_times.csv      point, cta, smid, start_ns, end_ns (one launch each)
#   space_startup_tile_times.csv.gz  point, tx, ty, cta, smid, issued_ns, data_ns
#   startup_ncu.tgz                  raw ncu CSVs and logs (ncu_space.py -> space_startup_traffic.csv)
#   startup_conditions.yaml          GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_startup.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run startup 300 "$@"
build_programs space

first=891
last=908
record_smi before
run_family space 90 "$out/space_startup.csv" "$first"
keep_points "$out/space_startup.csv" "$first" "$last"
timeout 90 "$work/bin/space" --cta-times "$out/space_startup_cta_times.csv" --only "$(seq -s, "$first" "$last")" \
  >"$work/logs/startup_cta_times.log" 2>&1
say "cta times: rc $?, $(wc -l <"$out/space_startup_cta_times.csv") lines"
timeout 90 "$work/bin/space" --tile-times "$work/space_startup_tile_times.csv" --only 894,897,905 \
  >"$work/logs/startup_tile_times.log" 2>&1
say "tile times: rc $?, $(wc -l <"$work/space_startup_tile_times.csv") lines"
gzip -c "$work/space_startup_tile_times.csv" >"$out/space_startup_tile_times.csv.gz"
if [ -n "$ncu_bin" ]; then
  read -r lo hi < <(traffic_range "$first" "$last") || exit 1
  profile space sp_stream 40 "$lo" "$hi"
else
  say "ncu not found"
fi
write_conditions "space_startup.csv, space_startup_cta_times.csv, space_startup_tile_times.csv.gz (scripts/silicon/calib/run_startup.sh)" \
  "cta_times=$work/logs/startup_cta_times.log" "tile_times=$work/logs/startup_tile_times.log" >"$out/startup_conditions.yaml"
archive_ncu startup
say "done"
