#!/usr/bin/env bash
# Silicon for the L2's partitions (partition.cu): each SM's latency to 256 lines (which SMs share a
# partition, and what a far line costs), then pairs of SMs where the second asks for a sector the
# first one's fill brought unasked, with and without other SMs loading DRAM (ncu: DRAM bytes read).
# Leaves in OUTDIR:
#   partition_topology.csv.gz   smid, pass (0 from DRAM, 1-2 from the L2), line, offset, cycles
#   partition_map.csv           smid, group (by latency correlation), corr, pass used
#   partition_reread.csv        the re-read points as the program saw them (pairs, background tiles, latencies)
#   partition_ncu.tgz           raw ncu CSV of the re-read points and the logs
#   partition_conditions.yaml   GPU, clocks, versions, timings of each step
#
# usage: bash scripts/silicon/calib/run_partition.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run partition 300 "$@"
build_programs partition
(cuobjdump -sass -fun pt_latency "$work/bin/partition" || cuobjdump -sass "$work/bin/partition") >"$work/logs/partition_sass.txt" 2>&1

record_smi before
timeout 120 "$work/bin/partition" --topology "$work/topology.csv" >"$work/logs/topology.log" 2>&1
say "topology: rc $?, $(($(wc -l <"$work/topology.csv") - 1)) rows; $(grep -h 'mean |corr|' "$work/logs/topology.log" | tr '\n' ';')"
cp "$work/topology.csv.map" "$out/partition_map.csv"
gzip -c "$work/topology.csv" >"$out/partition_topology.csv.gz"
rm -f "$out/partition_reread.csv"
# Few metrics, so that ncu needs one pass (application replay reruns the program per pass, and the
# background's tile count, which the program writes, differs from run to run).
rr_metrics=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
if [ -n "$ncu_bin" ]; then
  timeout -k 5 $(($(left) - 20)) "$ncu_bin" --replay-mode application --cache-control all --clock-control base \
    --metrics "$rr_metrics" --csv --print-units base --kernel-name "regex:pt_reread" \
    "$work/bin/partition" --out "$out/partition_reread.csv" --map "$out/partition_map.csv" \
    >"$work/ncu/partition_reread.csv" 2>"$work/ncu/partition_reread.err"
  say "re-read points under ncu: rc $?, $(($(wc -l <"$out/partition_reread.csv") - 1)) rows"
else
  timeout -k 5 $(($(left) - 20)) "$work/bin/partition" --out "$out/partition_reread.csv" --map "$out/partition_map.csv" \
    2>"$work/logs/partition_reread.err"
  say "ncu not found; re-read points timed only: rc $?"
fi
write_conditions "partition_*.csv (scripts/silicon/calib/run_partition.sh)" "topology=$work/logs/topology.log" >"$out/partition_conditions.yaml"
tar czf "$out/partition_ncu.tgz" -C "$work" ncu logs
say "done"
