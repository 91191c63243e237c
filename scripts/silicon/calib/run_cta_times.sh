#!/usr/bin/env bash
# Which SMs run ahead, stream by stream: space.cu --cta-times (one launch of each point, each CTA's
# SM, start and end by %globaltimer) for a list of space.csv points, to tell which kinds of
# saturation give some SMs a larger share (docs/calibration.md: the drift behind second DRAM reads).
# Leaves in OUTDIR:
#   space_cta_times_POINTS.csv.gz   point, cta, smid, start_ns, end_ns
#   cta_times_NAME_conditions.yaml  GPU, clocks, versions, the point list
#
# usage: bash scripts/silicon/calib/run_cta_times.sh OUTDIR POINTS(comma-separated) [NAME] [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
[ $# -ge 2 ] || { echo "usage: run_cta_times.sh OUTDIR POINTS [NAME] [BUDGET_S]" >&2; exit 2; }
points=$2
name=${3:-points}
start_run cta_times 240 "$1" "${4:-240}"
build_programs space
record_smi before
timeout $(($(left) - 20)) "$work/bin/space" --cta-times "$work/cta_times.csv" --only "$points" >"$work/logs/cta_times.log" 2>&1
say "cta times: rc $?, $(($(wc -l <"$work/cta_times.csv") - 1)) CTAs"
gzip -c "$work/cta_times.csv" >"$out/space_cta_times_$name.csv.gz"
write_conditions "space_cta_times_$name.csv.gz (scripts/silicon/calib/run_cta_times.sh)" "cta_times=$work/logs/cta_times.log" >"$out/cta_times_${name}_conditions.yaml"
echo "points: \"$points\"" >>"$out/cta_times_${name}_conditions.yaml"
say "done"
