#!/usr/bin/env bash
# How a launch starts its CTAs (dispatch.cu): builds it and runs every point into OUTDIR
# (dispatch.csv, dispatch_raw.csv, dispatch_conditions.yaml). Under a minute.
#
# usage: bash scripts/silicon/calib/run_dispatch.sh OUTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_dispatch.XXXXXX")
nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/dispatch" "$here/dispatch.cu" -lcuda || exit 1
nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/devinfo" "$here/devinfo.cu" -lcuda || exit 1
rm -f "$out/dispatch.csv" "$out/dispatch_raw.csv"
timeout -k 5 300 "$work/dispatch" --out "$out/dispatch.csv"
rc=$?
{
  echo "# conditions of dispatch.csv (scripts/silicon/calib/run_dispatch.sh)"
  echo "date_utc: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  echo "rc: $rc"
  echo "device:"
  "$work/devinfo" 2>/dev/null | sed 's/^/  /'
  echo "nvidia_smi: \"$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null)\""
} >"$out/dispatch_conditions.yaml"
cat "$out/dispatch.csv"
