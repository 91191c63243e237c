#!/usr/bin/env bash
# Silicon for what the consumer of gemm.cu and workloads.cu costs a k-step (KV step) beside its spin,
# in the builds that measured the data files. A compute-bound step costs 2-6% more (GEMM) than
# spin + the bandwidth kernel's fitted 340 cycles, and the cost is the compiled loop's (a build
# with one more branch never taken runs 80 cycles a step slower: gemm_stamps/): so each measuring
# build's source is rebuilt with only host code appended (points whose operands stay in the L2,
# 8 MB each, and whose steps nothing but the consumer bounds), its kernels checked byte for byte
# against the unchanged source's built by the same nvcc (13.0.88, as the data files' conditions
# record). Leaves in OUTDIR:
#   kernel_costs.csv             build, program, data files, point, parameters, span, steps per CTA,
#                                cycles a step
#   kernel_costs_conditions.yaml GPU, clocks, versions, the run's log
#   kernel_costs_ncu_BUILD.csv   with KERNEL_COSTS_NCU=1 or only: ncu's DRAM and L2 counters of the
#                                GEMM builds' spin-free L2-resident points (81, 85)
#
# usage: bash scripts/silicon/calib/run_kernel_costs.sh prepare SRCDIR   (where the git history is)
#        bash scripts/silicon/calib/run_kernel_costs.sh run SRCDIR OUTDIR [BUDGET_S]   (on the GPU machine)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# The commit that added each data file (GPU/file), whose program measured it.
commits="gemm:e8fe486:h100/gemm.csv gemm:e60067a:h200/gemm.csv workloads:5230354:h100/workloads.csv
workloads:6de51c3:h200/workloads.csv"
if [ "${1:-}" = prepare ]; then
  [ $# -eq 2 ] || { echo "usage: run_kernel_costs.sh prepare SRCDIR" >&2; exit 2; }
  [ ! -e "$2" ] || [ -z "$(ls -A "$2")" ] || { echo "run_kernel_costs.sh prepare: $2 is not empty" >&2; exit 2; }
  mkdir -p "$2" || exit 2
  . "$here/run_lib.sh"
  for pcf in $commits; do
    prog=${pcf%%:*}
    cf=${pcf#*:}
    d=$(source_at "$2" "${cf%%:*}" "$prog" "$prog-" orig) || exit 1
    cp "$d/orig/calib_common.cuh" "$d/"
    python3 "$here/kernel_costs_points.py" "$prog" "$d/orig/$prog.cu" "$d/$prog.cu" || exit 1
    echo "${cf#*:}" >>"$d/files"
    echo "$prog" >"$d/program"
  done
  ls "$2"
  exit 0
fi
[ "${1:-}" = run ] && [ $# -ge 3 ] || { echo "usage: run_kernel_costs.sh run SRCDIR OUTDIR [BUDGET_S]" >&2; exit 2; }
src=$(cd "$2" && pwd) || exit 2
shift 2
. "$here/run_lib.sh"
start_run kernel_costs 300 "$@"
build_programs
for d in "$src"/*/; do
  b=$(basename "$d")
  prog=$(cat "$d/program")
  (cd "$d" && nvcc -O2 -std=c++17 -arch=sm_90a -cubin -o "$work/bin/$b.cubin" "$prog.cu" &&
    nvcc -O2 -std=c++17 -arch=sm_90a -cubin -o "$work/bin/$b.orig.cubin" "orig/$prog.cu" &&
    nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/bin/$b" "$prog.cu" -lcuda) >"$work/logs/build_$b.log" 2>&1 &
done
wait
for d in "$src"/*/; do
  b=$(basename "$d")
  if [ ! -f "$work/bin/$b.orig.cubin" ] || [ ! -f "$work/bin/$b.cubin" ] || [ ! -x "$work/bin/$b" ]; then
    say "$b: build failed (logs/build_$b.log); not run"
    rm -f "$work/bin/$b"
  elif ! python3 "$here/kernel_costs_points.py" --compare "$work/bin/$b.orig.cubin" "$work/bin/$b.cubin" >>"$work/logs/run.log" 2>&1; then
    say "$b: kernels differ from the unchanged source's; not run"
    rm -f "$work/bin/$b"
  fi
done
say "built $(for d in "$src"/*/; do [ -x "$work/bin/$(basename "$d")" ] && echo; done | wc -l) builds"
record_smi before
rm -f "$work"/*.csv
# KERNEL_COSTS_NCU=1: also (=only: only) the GEMM builds' spin-free L2-resident points under ncu
# (kernel_costs_ncu_BUILD.csv: what reaches the L2 of a GEMM stream that nothing but the L2 bounds)
if [ "${KERNEL_COSTS_NCU:-0}" != 0 ]; then
  for d in "$src"/gemm-*/; do
    b=$(basename "$d")
    [ -x "$work/bin/$b" ] || continue
    for p in 81 85; do profile "$b" gm_mainloop 1 "$p" $((p + 1)); done
    cat "$work/ncu/${b}"_t*.csv >"$out/kernel_costs_ncu_$b.csv"
  done
  say "ncu done"
fi
[ "${KERNEL_COSTS_NCU:-0}" = only ] && { write_conditions "kernel_costs_ncu_*.csv (scripts/silicon/calib/run_kernel_costs.sh, KERNEL_COSTS_NCU=only)" "log=$work/logs/run.log" >"$out/kernel_costs_ncu_conditions.yaml"; say "done"; exit 0; }
for rep in 1 2; do
  for d in "$src"/*/; do
    b=$(basename "$d")
    prog=$(cat "$d/program")
    [ -x "$work/bin/$b" ] || continue
    for p in $(python3 "$here/kernel_costs_points.py" --points "$prog"); do
      timeout 60 "$work/bin/$b" --out "$work/$b.csv" --only "$p" --reps 3 >>"$work/logs/$b.log" 2>&1
    done
  done
done
python3 "$here/kernel_costs_points.py" --table "$src" "$work" >"$out/kernel_costs.csv"
say "kernel costs: $(($(wc -l <"$out/kernel_costs.csv") - 1)) rows"
write_conditions "kernel_costs.csv (scripts/silicon/calib/run_kernel_costs.sh)" "log=$work/logs/run.log" \
  >"$out/kernel_costs_conditions.yaml"
say "done"
