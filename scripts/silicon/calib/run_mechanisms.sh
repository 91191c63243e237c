#!/usr/bin/env bash
# Silicon for two mechanisms the model gets wrong (docs/calibration.md): where reads of the same
# tile by two SMs merge (coalesce.cu's points from 64 on: one TPC or two TPCs of one GPC), how far
# apart the CTAs of a GEMM that share tiles run (gemm.cu --skew), and whether second DRAM reads
# follow the tiles or the lines in flight (space.cu's group fills, points 728 on). Leaves in OUTDIR:
#   coalesce_tpc.csv        the pairs, timed
#   space_fills.csv         the fills group, timed
#   gemm_skew.csv.gz        point, cta, smid, step, t_ns of every 16th k-step (points of gemm.csv)
#   mechanisms_ncu.tgz      raw ncu CSVs and logs (ncu_space.py turns them into *_traffic.csv)
#   mechanisms_conditions.yaml  GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_mechanisms.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run mechanisms 420 "$@"
build_programs coalesce space gemm

record_smi before
run_family coalesce 60 "$out/coalesce_tpc.csv" 64
run_family space 90 "$out/space_fills.csv" 728
timeout 120 "$work/bin/gemm" --skew "$work/gemm_skew.csv" >"$work/logs/gemm_skew.log" 2>&1
say "gemm skew: rc $?, $(wc -l <"$work/gemm_skew.csv") lines"
gzip -c "$work/gemm_skew.csv" >"$out/gemm_skew.csv.gz"
if [ -n "$ncu_bin" ]; then
  profile coalesce "co_" 32 64 96
  profile space sp_stream 24 344 416
else
  say "ncu not found"
fi
write_conditions "coalesce_tpc.csv, space_fills.csv, gemm_skew.csv.gz (scripts/silicon/calib/run_mechanisms.sh)" "gemm_skew=$work/logs/gemm_skew.log" >"$out/mechanisms_conditions.yaml"
archive_ncu mechanisms
say "done"
