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
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [BUDGET_S]" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
budget=${2:-420}
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_mechanisms.XXXXXX")
mkdir -p "$work/bin" "$work/ncu" "$work/logs"
say() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$work/logs/run.log"; }
left() { echo $((budget - SECONDS)); }
. "$here/run_lib.sh"

for p in coalesce space gemm devinfo; do
  (nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/bin/$p" "$here/$p.cu" -lcuda >"$work/logs/build_$p.log" 2>&1 ||
    echo "build of $p failed" >>"$work/logs/build_failed") &
done
wait
[ -f "$work/logs/build_failed" ] && { cat "$work/logs/build_failed" "$work/logs"/build_*.log >&2; exit 1; }
say "built"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$work/logs/smi_before.csv" 2>&1
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
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$work/logs/smi_after.csv" 2>&1
{
  echo "# conditions of coalesce_tpc.csv, space_fills.csv, gemm_skew.csv.gz (scripts/silicon/calib/run_mechanisms.sh)"
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
  echo "gemm_skew: |"
  sed 's/^/  /' "$work/logs/gemm_skew.log"
  echo "log: |"
  sed 's/^/  /' "$work/logs/run.log"
} >"$out/mechanisms_conditions.yaml"
cp "$work/logs"/*.err "$work/ncu/" 2>/dev/null
tar czf "$out/mechanisms_ncu.tgz" -C "$work" ncu logs
say "done"
