#!/usr/bin/env bash
# Silicon for how many SMs' reads of one line one read serves (coalesce.cu's points from 133 on:
# groups of 2-16 CTAs of one GPC, as clusters or as consecutive CTAs, streaming the same 8 KB tiles
# from DRAM or the L2, together or each rank 250 ns after the one before; docs/calibration.md).
# Leaves in OUTDIR:
#   coalesce_group.csv              the points, timed
#   coalesce_group_ncu.tgz          raw ncu CSVs and logs (ncu_space.py turns them into
#                                   coalesce_traffic.csv; rename it coalesce_group_traffic.csv)
#   coalesce_group_conditions.yaml  GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_coalesce_group.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run coalesce_group 300 "$@"
build_programs coalesce

record_smi before
run_family coalesce 90 "$out/coalesce_group.csv" 133
if [ -n "$ncu_bin" ]; then
  profile coalesce "co_" 20 133 198
else
  say "ncu not found"
fi
write_conditions "coalesce_group.csv (scripts/silicon/calib/run_coalesce_group.sh)" >"$out/coalesce_group_conditions.yaml"
archive_ncu coalesce_group
say "done"
