#!/usr/bin/env bash
# L2 fetch size of a sector miss on a Hopper GPU (fetch.cu): builds the program, profiles each of
# its points once with ncu (caches flushed before each launch) and writes OUTDIR/fetch.csv, with
# the raw ncu output in OUTDIR/fetch_logs.tgz. run_calibration.sh runs it last; alone it takes
# about a minute.
#
# usage: bash scripts/silicon/calib/run_fetch.sh OUTDIR
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_fetch.XXXXXX")
mkdir -p "$work/ncu"
rm -f "$out/fetch.csv" "$out/fetch_logs.tgz"

if ! timeout 300 nvcc -O2 -std=c++17 -arch=sm_90 -o "$work/fetch" "$here/fetch.cu" -lcuda >"$work/ncu/build.log" 2>&1; then
  echo "fetch: build failed" >&2
  cat "$work/ncu/build.log" >&2
  exit 1
fi
ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu_bin" ]; then
  echo "fetch: ncu not found" >&2
  exit 1
fi
metrics=dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum
"$work/fetch" --list >"$work/ncu/points.csv"
n=$(($(wc -l <"$work/ncu/points.csv") - 1))
for i in $(seq 0 $((n - 1))); do
  timeout -k 5 60 "$ncu_bin" --clock-control none --cache-control all --metrics "$metrics" --csv --print-units base \
    --kernel-name regex:fetch_ --launch-count 1 "$work/fetch" --point "$i" >"$work/ncu/f$i.csv" 2>"$work/ncu/f$i.err"
  echo $? >"$work/ncu/f$i.rc"
  echo "fetch point $i: ncu rc $(cat "$work/ncu/f$i.rc")"
done
python3 "$here/traffic_parse.py" --points "$work/ncu/points.csv" --raw "$work/ncu" --out "$out/fetch.csv" \
  --id fpoint --prefix f --kernel fetch_ --values limit_default,limit_effective
tar czf "$out/fetch_logs.tgz" -C "$work" ncu
{
  echo "# conditions of fetch.csv (scripts/silicon/calib/run_fetch.sh)"
  echo "date_utc: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  for f in name driver_version clocks.sm clocks.mem clocks.applications.graphics; do
    echo "$f: \"$(timeout 20 nvidia-smi -i 0 --query-gpu="$f" --format=csv,noheader,nounits 2>/dev/null | head -1)\""
  done
  echo "cuda_version_nvcc: \"$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)\""
  echo "ncu_version: \"$("$ncu_bin" --version 2>/dev/null | tail -1)\""
} >"$out/fetch_conditions.yaml"
cat "$out/fetch_conditions.yaml" "$out/fetch.csv"
