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
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [BUDGET_S]" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
budget=${2:-420}
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_workloads.XXXXXX")
mkdir -p "$work/bin" "$work/ncu" "$work/logs"
say() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$work/logs/run.log"; }
left() { echo $((budget - SECONDS)); }

for p in workloads coalesce space placement devinfo; do
  (nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/bin/$p" "$here/$p.cu" -lcuda >"$work/logs/build_$p.log" 2>&1 ||
    echo "build of $p failed" >>"$work/logs/build_failed") &
done
wait
[ -f "$work/logs/build_failed" ] && { cat "$work/logs/build_failed" "$work/logs"/build_*.log >&2; exit 1; }
say "built"

. "$here/run_lib.sh"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$work/logs/smi_before.csv" 2>&1
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

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$work/logs/smi_after.csv" 2>&1
{
  echo "# conditions of workloads.csv, coalesce.csv, space_inflight.csv (scripts/silicon/calib/run_workloads.sh)"
  echo "date_end_utc: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  echo "wall_seconds: $SECONDS"
  echo "cuda_version_nvcc: \"$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)\""
  echo "ncu_version: \"$("$ncu_bin" --version 2>/dev/null | tail -1)\""
  echo "device:"
  "$work/bin/devinfo" 2>/dev/null | sed 's/^/  /'
  echo "nvidia_smi_before: |"
  sed 's/^/  /' "$work/logs/smi_before.csv"
  echo "nvidia_smi_after: |"
  sed 's/^/  /' "$work/logs/smi_after.csv"
  echo "log: |"
  sed 's/^/  /' "$work/logs/run.log"
} >"$out/workloads_conditions.yaml"
cp "$work/logs"/*.err "$work/ncu/" 2>/dev/null
tar czf "$out/workloads_ncu.tgz" -C "$work" ncu logs
say "done"
