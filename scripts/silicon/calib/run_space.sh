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
. "$here/run_lib.sh"
start_run space 480 "$@"
build_programs space gemm descriptor_space

record_smi before
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

write_conditions "space.csv, gemm.csv, descriptor_space.csv (scripts/silicon/calib/run_space.sh)" >"$out/space_conditions.yaml"
archive_ncu space
say "done"
