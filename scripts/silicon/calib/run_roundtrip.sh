#!/usr/bin/env bash
# Silicon for where a stage's round trip goes in space.cu's stream (roundtrip.cu: clock64 stamps of
# the producer's issue, the data's arrival as the consumer sees it, the consumer's read and release,
# the release as the producer sees it; 16 B x 16 to 64 B x 256 boxes, 1-8 stages, clean 256 MB and
# warm 16 MB), run twice. Leaves in OUTDIR:
#   roundtrip.csv, roundtrip_2.csv        per point and repetition: rate, clock, stamp medians
#   roundtrip_stamps.csv.gz (and _2)      every stamp of the first stamped repetition (the project keeps run 1's)
#   roundtrip_grid1.csv                   one CTA alone (at most 4,096 tiles): the trip with the memory
#                                         system otherwise idle
#   roundtrip_conditions.yaml             GPU, clocks, versions, the run's log
#
# usage: bash scripts/silicon/calib/run_roundtrip.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run roundtrip 240 "$@"
build_programs roundtrip
record_smi before
for run in 1 2; do
  sfx=$([ "$run" = 1 ] && echo "" || echo "_$run")
  timeout 100 "$work/bin/roundtrip" "$out/roundtrip$sfx.csv" "$work/stamps$sfx.csv" 3 >"$work/logs/roundtrip$sfx.log" 2>&1
  say "roundtrip run $run: rc $?, $(wc -l <"$out/roundtrip$sfx.csv") lines"
  gzip -c "$work/stamps$sfx.csv" >"$out/roundtrip_stamps$sfx.csv.gz"
done
timeout 100 "$work/bin/roundtrip" "$out/roundtrip_grid1.csv" "$work/stamps_grid1.csv" 3 1 >"$work/logs/roundtrip_grid1.log" 2>&1
say "roundtrip, one CTA: rc $?, $(wc -l <"$out/roundtrip_grid1.csv") lines"
write_conditions "roundtrip.csv, roundtrip_2.csv, roundtrip_grid1.csv, roundtrip_stamps*.csv.gz (scripts/silicon/calib/run_roundtrip.sh)" \
  "run_1=$work/logs/roundtrip.log" "run_2=$work/logs/roundtrip_2.log" "grid1=$work/logs/roundtrip_grid1.log" \
  >"$out/roundtrip_conditions.yaml"
say "done"
