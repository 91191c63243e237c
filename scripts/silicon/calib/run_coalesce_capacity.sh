#!/usr/bin/env bash
# Silicon for the GPC read coalescer's capacity (coalesce.cu's points from 96 on: 66 pairs of CTAs
# streaming the same 32 KB tiles from DRAM with 1-6 stages, 0-2 us apart, and each depth with
# every CTA on its own tiles; docs/calibration.md). Leaves in OUTDIR:
#   coalesce_capacity.csv          the points, timed
#   coalesce_capacity_ncu.tgz      raw ncu CSVs and logs (ncu_space.py turns them into
#                                  coalesce_capacity_traffic.csv)
#   coalesce_capacity_conditions.yaml  GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_coalesce_capacity.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run coalesce_capacity 300 "$@"
build_programs coalesce

record_smi before
run_family coalesce 90 "$out/coalesce_capacity.csv" 96
if [ -n "$ncu_bin" ]; then
  profile coalesce "co_" 20 96 116
else
  say "ncu not found"
fi
write_conditions "coalesce_capacity.csv (scripts/silicon/calib/run_coalesce_capacity.sh)" >"$out/coalesce_capacity_conditions.yaml"
archive_ncu coalesce_capacity
say "done"
