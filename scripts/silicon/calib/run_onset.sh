#!/usr/bin/env bash
# Silicon for where the fast SMs start to run ahead: space.cu's group onset (points 837-872: one
# CTA per SM of 32 B and 64 B x 256-row boxes over 256 MB, 3-8 stages, 768-2,048 rows in flight per
# SM in steps of 256) timed, ncu's DRAM bytes and L2 sectors for each, and every tile's issue and
# data-in time (--tile-times) for the 32 B points. Leaves in OUTDIR:
#   space_onset.csv               points 837-872 timed
#   space_onset_tile_times.csv.gz point, tx, ty, cta, smid, issued_ns, data_ns (the 24 32 B points)
#   onset_ncu.tgz                 raw ncu CSVs and logs (ncu_space.py turns them into space_onset_traffic.csv)
#   onset_conditions.yaml         GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_onset.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run onset 300 "$@"
build_programs space

first=837
record_smi before
run_family space 90 "$out/space_onset.csv" "$first"
keep_points "$out/space_onset.csv" "$first" $((first + 35))
only=$(seq -s, "$first" $((first + 23)))
timeout 120 "$work/bin/space" --tile-times "$work/space_onset_tile_times.csv" --only "$only" \
  >"$work/logs/onset_tile_times.log" 2>&1
say "tile times: rc $?, $(wc -l <"$work/space_onset_tile_times.csv") lines"
gzip -c "$work/space_onset_tile_times.csv" >"$out/space_onset_tile_times.csv.gz"
if [ -n "$ncu_bin" ]; then
  read -r lo hi < <(traffic_range "$first" $((first + 35))) || exit 1
  profile space sp_stream 40 "$lo" "$hi"
else
  say "ncu not found"
fi
write_conditions "space_onset.csv, space_onset_tile_times.csv.gz (scripts/silicon/calib/run_onset.sh)" \
  "tile_times=$work/logs/onset_tile_times.log" >"$out/onset_conditions.yaml"
archive_ncu onset
say "done"
