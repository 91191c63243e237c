#!/usr/bin/env bash
# What runs on the GPU machine (device): build the capture program, run the committed case
# lists, and pack the raw results into $OUT. Convert them here with to_golden.py.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/tma_capture_work}
mkdir -p "$work"
nvcc -O2 -std=c++17 -arch=sm_90 "$here/tma_capture.cu" -o "$work/tma_capture" -lcuda || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$work/nvidia-smi.csv" 2>&1
for list in "$@"; do
  name=$(basename "$list" .txt)
  rm -rf "$work/$name"
  TMA_CAPTURE_BIN="$work/tma_capture" "$here/run_capture.sh" "$list" "$work/$name"
  cp "$work/nvidia-smi.csv" "$work/$name/"
  tar czf "${OUT:-$work}/raw_$name.tgz" -C "$work" "$name"
done
ls -la "${OUT:-$work}"
