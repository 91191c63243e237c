#!/usr/bin/env bash
# Silicon for a trailing CTA beside a background load (coalesce.cu's points from 116 on: 33 pairs of
# CTAs streaming the same 32 KB tiles from DRAM through one stage, 0-2 us apart, beside 33 clusters
# streaming their own tiles through 1-6 stages or none; docs/calibration.md). Leaves in OUTDIR:
#   coalesce_background.csv          the points, timed
#   coalesce_background_ncu.tgz      raw ncu CSVs and logs (ncu_space.py turns them into
#                                  coalesce_background_traffic.csv)
#   coalesce_background_conditions.yaml  GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_coalesce_background.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run coalesce_background 300 "$@"
build_programs coalesce

record_smi before
run_family coalesce 90 "$out/coalesce_background.csv" 116
if [ -n "$ncu_bin" ]; then
  profile coalesce "co_" 20 116 133
else
  say "ncu not found"
fi
write_conditions "coalesce_background.csv (scripts/silicon/calib/run_coalesce_background.sh)" >"$out/coalesce_background_conditions.yaml"
archive_ncu coalesce_background
say "done"
