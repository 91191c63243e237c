#!/usr/bin/env bash
# Silicon for where the SMs that run ahead take their share: space.cu's group hits (points 830-836:
# a warm 24 MB tensor, every read an L2 hit, 1,024-4,096 box rows in flight per SM) timed, and each
# CTA's SM, start and end (--cta-times) for them and for point 803 (the cta group's DRAM-bound
# 32 B x 256 column stream, which shows this chip's fast SMs). Leaves in OUTDIR:
#   space_hits.csv              points 830-836, timed
#   space_hits_cta_times.csv    point, cta, smid, start_ns, end_ns (803 and 830-836, one launch each)
#   hits_conditions.yaml        GPU, clocks, versions, timings of each step
#   hits_logs.tgz               logs
#
# usage: bash scripts/silicon/calib/run_hits.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run hits 240 "$@"
build_programs space

record_smi before
run_family space 90 "$out/space_hits.csv" 830
timeout 90 "$work/bin/space" --cta-times "$out/space_hits_cta_times.csv" --only 803,830,831,832,833,834,835,836 \
  >"$work/logs/hits_cta_times.log" 2>&1
say "cta times: rc $?, $(wc -l <"$out/space_hits_cta_times.csv") lines"
write_conditions "space_hits.csv, space_hits_cta_times.csv (scripts/silicon/calib/run_hits.sh)" "cta_times=$work/logs/hits_cta_times.log" >"$out/hits_conditions.yaml"
tar czf "$out/hits_logs.tgz" -C "$work" logs
say "done"
