#!/usr/bin/env bash
# Silicon for how far apart the CTAs that share a line ask for it: space.cu --tile-times logs, in one
# launch of each point, when every tile's load was issued and when its data was in. The points are
# 32 B x 256 (and x 128) streams over 256 MB that read DRAM once (1,024 rows in flight per SM, or a
# grid barrier every 4 tiles) and their twins that read part of it twice (2,048 rows in flight):
#   696 col 128B S4, 1 CTA per SM (1,024 rows; 1.02 DRAM bytes per byte on the H100)
#   698 row none S4 x2 (2,048; 1.00)     699 row 128B S4 x2 (2,048; 1.24)
#   701 col none S4 x2 (2,048; 1.26)     702 col 128B S4 x2 (2,048; 1.50)
#   771 col 128B 32 B x 128 S4 x2 (1,024; 1.00)   775 the same with S8 (2,048; 1.55)
#   809 col 128B S4 x2 with a grid barrier every 4 tiles (in step; 1.00)
# TILE_TIMES_ONLY=i,j,... logs other points instead (space --list numbers them).
# Leaves in OUTDIR:
#   space_tile_times.csv.gz     point, tx, ty, cta, smid, issued_ns, data_ns (ns from the first CTA's start)
#   space_tile_times_timed.csv  the same points timed as run_space.sh times them (no log), same lease
#   tile_times_conditions.yaml  GPU, clocks, versions, timings of each step
#   tile_times_logs.tgz         logs
#
# usage: bash scripts/silicon/calib/run_tile_times.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run tile_times 240 "$@"
build_programs space

record_smi before
only=${TILE_TIMES_ONLY:-696,698,699,701,702,771,775,809}
timeout 120 "$work/bin/space" --tile-times "$work/space_tile_times.csv" --only "$only" \
  >"$work/logs/tile_times.log" 2>&1
say "tile times: rc $?, $(wc -l <"$work/space_tile_times.csv") lines"
gzip -c "$work/space_tile_times.csv" >"$out/space_tile_times.csv.gz"
# The same points timed without the log (each its own process: a fault costs one point).
for k in ${only//,/ }; do
  timeout 60 "$work/bin/space" --out "$out/space_tile_times_timed.csv" --only "$k" 2>>"$work/logs/timed.err"
done
say "timed: $(($(wc -l <"$out/space_tile_times_timed.csv") - 1)) points"
write_conditions "space_tile_times.csv.gz (scripts/silicon/calib/run_tile_times.sh)" "tile_times=$work/logs/tile_times.log" >"$out/tile_times_conditions.yaml"
tar czf "$out/tile_times_logs.tgz" -C "$work" logs
say "done"
