#!/usr/bin/env bash
# The other line of a 256-byte L2 promotion block (promoted_line.cu): times every point (15
# launches each), then profiles each once with ncu (caches flushed) for the TEX sectors' lookup
# hits and misses and DRAM bytes. Writes OUTDIR/promoted_line.csv (times),
# OUTDIR/promoted_line_traffic.csv (counters), OUTDIR/promoted_line_conditions.yaml and the raw
# ncu output in OUTDIR/promoted_line_logs.tgz. About three minutes on an H200 (2026-11-28: 181 s).
#
# usage: bash scripts/silicon/calib/run_promoted_line.sh OUTDIR
set -u

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_promoted_line.XXXXXX")
mkdir -p "$work/ncu"
rm -f "$out"/promoted_line*.csv

if ! timeout 300 nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/promoted_line" "$here/promoted_line.cu" -lcuda \
    >"$work/ncu/build.log" 2>&1; then
  echo "promoted_line: build failed" >&2
  cat "$work/ncu/build.log" >&2
  exit 1
fi
t0=$SECONDS
timeout -k 5 240 "$work/promoted_line" --out "$out/promoted_line.csv" 2>"$work/ncu/timed.err"
echo "timed: rc $? in $((SECONDS - t0)) s"

ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
metrics=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_op_read.sum
n=$("$work/promoted_line" --count)
for i in $(seq 0 $((n - 1))); do
  timeout -k 5 60 "$ncu_bin" --clock-control none --cache-control all --metrics "$metrics" --csv --print-units base \
    --kernel-name regex:pl_kernel --launch-count 1 "$work/promoted_line" --out "$work/ncu/discard.csv" --only "$i" \
    --reps 1 >"$work/ncu/p$i.csv" 2>"$work/ncu/p$i.err"
  echo "ncu point $i: rc $?"
done
"$work/promoted_line" --list >"$work/ncu/points.csv"
python3 - "$here" "$work/ncu" "$out/promoted_line_traffic.csv" <<'EOF'
import csv, os, sys
sys.path.insert(0, sys.argv[1])
from ncu_space import parse_chunk
from traffic_parse import fmt
raw, out = sys.argv[2], sys.argv[3]
points = list(csv.DictReader(open(os.path.join(raw, "points.csv"))))
names = ["dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
         "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
         "lts__t_sectors_op_read.sum"]
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(list(points[0].keys()) + ["dram_read_bytes", "tex_sectors", "tex_hit_sectors", "tex_miss_sectors",
                                          "lts_read_sectors", "status"])
    for p in points:
        path = os.path.join(raw, "p%s.csv" % p["point"])
        launches = parse_chunk(open(path, errors="replace").read()) if os.path.exists(path) else {}
        vals = next(iter(launches.values()), {})  # one profiled launch a point
        ok = all(n in vals for n in names)
        w.writerow(list(p.values()) + [fmt(vals.get(n)) for n in names] + ["ok" if ok else "no_metrics"])
EOF
tar czf "$out/promoted_line_logs.tgz" -C "$work" ncu
{
  echo "# conditions of promoted_line.csv and promoted_line_traffic.csv (scripts/silicon/calib/run_promoted_line.sh)"
  echo "date_utc: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  for f in name driver_version clocks.sm clocks.mem clocks.applications.graphics; do
    echo "$f: \"$(timeout 20 nvidia-smi -i 0 --query-gpu="$f" --format=csv,noheader,nounits 2>/dev/null | head -1)\""
  done
  echo "cuda_version_nvcc: \"$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)\""
  echo "ncu_version: \"$("$ncu_bin" --version 2>/dev/null | tail -1)\""
} >"$out/promoted_line_conditions.yaml"
cat "$out/promoted_line_conditions.yaml" "$out/promoted_line.csv" "$out/promoted_line_traffic.csv"
