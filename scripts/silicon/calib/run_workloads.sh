#!/usr/bin/env bash
# Silicon for the workload table and the L2 mechanisms (workloads.cu, coalesce.cu, space.cu's
# group inflight): builds the programs, runs every point (a program that faults is restarted at
# the next point), profiles each with ncu, and leaves in OUTDIR:
#   workloads.csv           FlashAttention-3-style forward and split-KV decode loops, timed
#   coalesce.csv            pairs of CTAs loading the same tiles a set time apart, timed
#   space_inflight.csv      space.cu's points from 704 on (group inflight; the later groups fills, cta
#                           run too since they were appended: run_mechanisms.sh is theirs), timed
#   placement.csv           the SM (%smid) of every CTA of plain and cluster launches (placement.cu)
#   workloads_ncu.tgz       raw ncu CSVs (workloads_tNNN.csv, coalesce_tNNN.csv, space_tNNN.csv),
#                           the traffic point lists and the logs; ncu_space.py turns them into
#                           *_traffic.csv
#   workloads_conditions.yaml  GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_workloads.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run workloads 420 "$@"
build_programs workloads coalesce space placement

record_smi before
timeout 60 "$work/bin/placement" >"$out/placement.csv" 2>>"$work/logs/placement.err"
say "placement: rc $?, $(wc -l <"$out/placement.csv") lines"
run_family workloads 90 "$out/workloads.csv" 0
run_family coalesce 60 "$out/coalesce.csv" 0
run_family space 60 "$out/space_inflight.csv" 704

if [ -n "$ncu_bin" ]; then
  profile workloads wl_loop 22
  profile coalesce "co_" 32
  profile space sp_stream 24 320 344
else
  say "ncu not found"
fi

write_conditions "workloads.csv, coalesce.csv, space_inflight.csv (scripts/silicon/calib/run_workloads.sh)" >"$out/workloads_conditions.yaml"
archive_ncu workloads
say "done"
