#!/usr/bin/env bash
# The measurement space of the timing-fidelity work (space.cu, gemm.cu, descriptor_space.cu): builds
# the three programs, runs every point of each (a program that faults is restarted at the next
# point), profiles the traffic subsets with ncu in chunks, and leaves in OUTDIR:
#   space.csv gemm.csv descriptor_space.csv     the timed points
#   space_ncu.tgz                               raw ncu CSVs (space_tNNN.csv, gemm_tNNN.csv) and the
#                                               traffic point lists; scripts/silicon/calib/ncu_space.py
#                                               turns them into space_traffic.csv / gemm_traffic.csv
#   space_conditions.yaml                       GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_space.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [BUDGET_S]" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
budget=${2:-480}
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_space.XXXXXX")
mkdir -p "$work/bin" "$work/ncu" "$work/logs"
say() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$work/logs/run.log"; }
left() { echo $((budget - SECONDS)); }

for p in space gemm descriptor_space devinfo; do
  (nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/bin/$p" "$here/$p.cu" -lcuda >"$work/logs/build_$p.log" 2>&1 ||
    echo "build of $p failed" >>"$work/logs/build_failed") &
done
wait
[ -f "$work/logs/build_failed" ] && { cat "$work/logs/build_failed" "$work/logs"/build_*.log >&2; exit 1; }
say "built"

. "$here/run_lib.sh"  # run_family, profile

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$work/logs/smi_before.csv" 2>&1
run_family space 200 "$out/space.csv" 0
run_family gemm 100 "$out/gemm.csv" 0
run_family descriptor_space 100 "$out/descriptor_space.csv" 0

# ncu: application replay (each pass reruns the process, so every launch sees the L2 state its
# point made) with the caches left alone; the chunks bound what one failure costs.
if [ -n "$ncu_bin" ]; then
  profile gemm gm_mainloop 27
  profile space sp_stream 40
else
  say "ncu not found"
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$work/logs/smi_after.csv" 2>&1
{
  echo "# conditions of space.csv, gemm.csv, descriptor_space.csv (scripts/silicon/calib/run_space.sh)"
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
} >"$out/space_conditions.yaml"
cp "$work/logs"/*.err "$work/ncu/" 2>/dev/null
tar czf "$out/space_ncu.tgz" -C "$work" ncu logs
say "done"
