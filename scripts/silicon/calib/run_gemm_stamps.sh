#!/usr/bin/env bash
# Where a GEMM main loop's k-step goes (gemm.cu --stamps: clock64 stamps of the producer's wait for
# a free stage and its issue, the consumer's wait for data and its release, 64 k-steps of every CTA),
# and the same points timed without stamps on the same lease (gemm.cu --only). Leaves in OUTDIR:
#   gemm_stamps.csv.gz          point, cta, smid, step, six stamps (cycles from the CTA's first)
#   gemm_stamps_timed.csv       the same points as gemm.csv measures them (no stamps)
#   gemm_sass.txt               the main loop's SASS (cuobjdump), for the spin loop's instructions
#   gemm_stamps_conditions.yaml GPU, clocks, versions, the run's logs
#
# usage: bash scripts/silicon/calib/run_gemm_stamps.sh OUTDIR [POINTS] [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
[ $# -ge 1 ] || { echo "usage: run_gemm_stamps.sh OUTDIR [POINTS] [BUDGET_S]" >&2; exit 2; }
points=${2:-0,1,2,18,19,20,27,28,29,54,55,56}
start_run gemm_stamps 240 "$1" "${3:-240}"
build_programs gemm
record_smi before
timeout 120 "$work/bin/gemm" --stamps "$work/stamps.csv" --only "$points" >"$work/logs/stamps.log" 2>&1
say "stamps: rc $?, $(($(wc -l <"$work/stamps.csv") - 1)) rows"
gzip -c "$work/stamps.csv" >"$out/gemm_stamps.csv.gz"
rm -f "$out/gemm_stamps_timed.csv"
for p in ${points//,/ }; do
  timeout 60 "$work/bin/gemm" --out "$out/gemm_stamps_timed.csv" --only "$p" >>"$work/logs/timed.log" 2>&1
done
say "timed: $(($(wc -l <"$out/gemm_stamps_timed.csv") - 1)) points"
# the kernel sits in an anonymous namespace: its mangled name is found in the whole dump
cuobjdump -sass "$work/bin/gemm" 2>&1 | awk '/Function : .*gm_mainloop/ { on = 1 } /Function : / && !/gm_mainloop/ { on = 0 } on' \
  >"$out/gemm_sass.txt"
[ -s "$out/gemm_sass.txt" ] || say "no SASS of gm_mainloop found"
write_conditions "gemm_stamps.csv.gz, gemm_stamps_timed.csv, gemm_sass.txt (scripts/silicon/calib/run_gemm_stamps.sh)" \
  "stamps=$work/logs/stamps.log" "timed=$work/logs/timed.log" >"$out/gemm_stamps_conditions.yaml"
echo "points: \"$points\"" >>"$out/gemm_stamps_conditions.yaml"
say "done"
