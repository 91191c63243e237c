#!/usr/bin/env bash
# Runs every case of a case file through tma_capture, restarting it after each case that
# traps the GPU (a trap kills the CUDA context), so that one bad case never stops the rest.
# usage: run_capture.sh CASES OUTDIR   (TMA_CAPTURE_BIN names the binary; default ./tma_capture)
set -u
cases=$1
out=$2
bin=${TMA_CAPTURE_BIN:-./tma_capture}
mkdir -p "$out"
n=$(grep -vc '^#' "$cases")
echo 0 >"$out/next"
restarts=0
while :; do
  next=$(cat "$out/next")
  [ "$next" -ge "$n" ] && break
  timeout 300 "$bin" "$cases" "$out" --start "$next"
  rc=$?
  [ $rc -eq 0 ] && break
  restarts=$((restarts + 1))
  if [ $rc -ne 3 ]; then
    # crashed or hung inside a case: record it and go on with the next one
    cur=$(cat "$out/next")
    name=$(grep -v '^#' "$cases" | sed -n "$((cur + 1))p" | sed 's/^name=\([^ ]*\).*/\1/')
    [ -f "$out/$name.res" ] || printf 'name: %s\nfault: process_exit_%d\n' "$name" "$rc" >"$out/$name.res"
    echo $((cur + 1)) >"$out/next"
  fi
done
echo "run_capture: $n cases, $restarts restarts" | tee -a "$out/capture.log"
