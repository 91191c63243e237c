#!/usr/bin/env bash
# Silicon for the second DRAM reads of tall narrow streams (docs/calibration.md): do they come from
# CTAs drifting apart? space.cu's group sync (points 804-815: the 32 B x 256 streams that read
# promoted sectors twice, with every producer held at a grid-wide barrier every 1, 4 or 16 tiles,
# or never) timed, each CTA's start and end (--cta-times: which SMs run ahead), and ncu's DRAM
# bytes; and group capacity (points 816-829: warm 16-64 MB streams, how much of a tensor read just
# before the L2 still holds). Leaves in OUTDIR:
#   space_sync.csv              points 804-829 timed (and the groups appended after them, as run_family
#                               runs a family to the last point)
#   space_sync_cta_times.csv    point, cta, smid, start_ns, end_ns (points 804-815, one launch each)
#   sync_ncu.tgz                raw ncu CSVs and logs (ncu_space.py turns them into space_sync_traffic.csv)
#   sync_conditions.yaml        GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_sync.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run sync 360 "$@"
build_programs space

record_smi before
run_family space 120 "$out/space_sync.csv" 804
timeout 60 "$work/bin/space" --cta-times "$out/space_sync_cta_times.csv" --only 804,805,806,807,808,809,810,811,812,813,814,815 \
  >"$work/logs/sync_cta_times.log" 2>&1
say "cta times: rc $?, $(wc -l <"$out/space_sync_cta_times.csv") lines"
if [ -n "$ncu_bin" ]; then
  profile space sp_stream 26 416 442
else
  say "ncu not found"
fi
write_conditions "space_sync.csv, space_sync_cta_times.csv (scripts/silicon/calib/run_sync.sh)" "cta_times=$work/logs/sync_cta_times.log" >"$out/sync_conditions.yaml"
archive_ncu sync
say "done"
