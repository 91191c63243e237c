#!/usr/bin/env bash
# TMA calibration run on a Hopper GPU (H100/H200, sm_90): builds the measurement programs, runs
# every family, profiles the traffic subset with ncu, and leaves in OUTDIR
#   latency.csv bandwidth.csv traffic.csv descriptor.csv store_reduce.csv multicast.csv
#   fetch.csv fetch_conditions.yaml fetch_logs.tgz (run_fetch.sh)
#   conditions.yaml logs.tgz (run log, per-program stderr, nvidia-smi samples, raw ncu output)
# See README.md beside this file. Wall time: about 3-5 minutes; hard budget CALIB_BUDGET_S
# (default 420 s) after which remaining work is skipped and recorded as such.
#
# usage: bash scripts/silicon/calib/run_calibration.sh OUTDIR
#
# Robustness: every program runs its points in a loop that survives faults. A CUDA error (a trap
# included) makes the program write a fault row and exit 3; it is restarted at the next point. A
# crash, or a hang (no new point for CALIB_STALL_S = 25 s: killed), is recorded with --mark-fault
# and the run goes on at the next point. Every in-kernel wait has its own timeout besides.
# Test hook: CALIB_FAULT_AT="latency:3:trap,bandwidth:5:hang" injects faults at those points.
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tma_calib.XXXXXX")
bin=$work/bin
mkdir -p "$bin" "$work/logs" "$work/ncu"
log=$work/logs/run.log
budget=${CALIB_BUDGET_S:-420}
t_start=$SECONDS
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rm -f "$out"/{latency,bandwidth,traffic,descriptor,store_reduce,multicast,fetch}.csv "$out/conditions.yaml" "$out/logs.tgz"

say() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - t_start))s] $*" | tee -a "$log"; }
left() { echo $((budget - (SECONDS - t_start))); }
min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }

# ------------------------------------------------------------------ conditions, before
smi_fields="name driver_version clocks.sm clocks.mem clocks.max.sm clocks.max.mem clocks.applications.graphics clocks.applications.memory pstate temperature.gpu power.draw power.limit persistence_mode compute_mode"
smi_yaml() {  # one indented YAML map of nvidia-smi fields
  for f in $smi_fields; do
    v=$(timeout 20 nvidia-smi -i 0 --query-gpu="$f" --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d '"')
    echo "  $f: \"${v:-unavailable}\""
  done
}
smi_before=$(smi_yaml)
timeout $((budget + 60)) nvidia-smi -i 0 --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,pstate \
  --format=csv,nounits -lms 500 >"$work/logs/smi_samples.csv" 2>&1 &
smi_pid=$!
say "work dir $work, output $out, budget ${budget}s"

# ------------------------------------------------------------------ build
families="latency bandwidth descriptor store_reduce multicast"
pids=""
for f in devinfo $families; do
  extra=""
  # sm_90 ptxas prints an advisory for .multicast::cluster (about future architectures); the
  # instruction is what this file measures, so the advisory alone is silenced.
  [ "$f" = multicast ] && extra="-Xptxas -suppress-async-bulk-multicast-advisory-warning"
  # shellcheck disable=SC2086
  timeout 300 nvcc -O2 -std=c++17 -arch=sm_90 $extra -o "$bin/$f" "$here/$f.cu" -lcuda >"$work/logs/build_$f.log" 2>&1 &
  pids="$pids $!"
done
for p in $pids; do wait "$p"; done
for f in devinfo $families; do
  if [ -x "$bin/$f" ]; then say "built $f"; else say "BUILD FAILED: $f (logs/build_$f.log)"; fi
done

# ------------------------------------------------------------------ device facts
if [ -x "$bin/devinfo" ]; then
  timeout 60 "$bin/devinfo" >"$work/devinfo.yaml" 2>"$work/logs/devinfo.err" || say "devinfo rc=$?"
else
  echo "devinfo_error: \"not built\"" >"$work/devinfo.yaml"
fi
tee -a "$log" <"$work/devinfo.yaml"

# ------------------------------------------------------------------ measurement families
summary=$work/summary.yaml
: >"$summary"
stall_s=${CALIB_STALL_S:-25}  # a program whose current point does not change for this long is killed
# Runs "$@" in the background and kills it when the point recorded in file $1 stops advancing for
# $stall_s seconds (returns 124) or after $2 seconds in all (returns 125); else returns its status.
run_watched() {
  local nextf=$1 limit=$2
  shift 2
  "$@" &
  local pid=$! last="" same=0 el=0 cur
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    el=$((el + 1))
    cur=$(cat "$nextf" 2>/dev/null)
    if [ "$cur" = "$last" ]; then same=$((same + 1)); else same=0; last=$cur; fi
    if [ "$same" -ge "$stall_s" ] || [ "$el" -ge "$limit" ]; then
      kill -TERM "$pid" 2>/dev/null
      sleep 3
      kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      if [ "$same" -ge "$stall_s" ]; then return 124; else return 125; fi
    fi
  done
  wait "$pid"
}
run_family() {  # NAME CAP_SECONDS
  local name=$1 cap=$2
  local exe=$bin/$name csv=$out/$name.csv next=$work/$name.next
  local t0=$SECONDS restarts=0 n pos=0 rc cur remain note="complete"
  if [ ! -x "$exe" ]; then
    say "$name: not built, skipped"
    printf '  %s: {points: 0, rows: 0, faults: 0, restarts: 0, seconds: 0, note: "not built"}\n' "$name" >>"$summary"
    return
  fi
  n=$("$exe" --count 2>/dev/null || echo 0)
  local deadline=$((SECONDS + cap))
  say "$name: $n points (cap ${cap}s)"
  while [ "$pos" -lt "$n" ]; do
    remain=$(min $((deadline - SECONDS)) "$(left)")
    if [ "$remain" -le 3 ]; then
      note="out of time at point $pos"
      say "$name: $note"
      break
    fi
    echo "$pos" >"$next"
    run_watched "$next" "$remain" "$exe" --out "$csv" --start "$pos" --next "$next" 2>>"$work/logs/$name.err"
    rc=$?
    [ $rc -eq 0 ] && break
    cur=$(cat "$next" 2>/dev/null || echo "$pos")
    restarts=$((restarts + 1))
    if [ $rc -eq 3 ]; then
      pos=$cur  # the program wrote the fault row and where to go on
    elif [ $rc -eq 4 ]; then
      note="setup failed (see logs/$name.err)"
      say "$name: $note"
      break
    else
      case $rc in
        124) st="fault:killed_no_progress_${stall_s}s" ;;
        125) st="fault:killed_out_of_time" ;;
        *) st="fault:process_rc_$rc" ;;
      esac
      "$exe" --out "$csv" --mark-fault "$cur" --status "$st" 2>>"$work/logs/$name.err"
      pos=$((cur + 1))
    fi
    say "$name: rc=$rc, going on at point $pos"
    if [ $restarts -ge 12 ]; then
      note="gave up after $restarts restarts at point $pos"
      say "$name: $note"
      break
    fi
  done
  local rows=0 faults=0
  if [ -f "$csv" ]; then
    rows=$(($(wc -l <"$csv") - 1))
    faults=$(grep -c ',fault:' "$csv")
  fi
  say "$name: $rows rows, $faults faults, $restarts restarts, $((SECONDS - t0))s"
  printf '  %s: {points: %s, rows: %s, faults: %s, restarts: %s, seconds: %s, note: "%s"}\n' \
    "$name" "$n" "$rows" "$faults" "$restarts" $((SECONDS - t0)) "$note" >>"$summary"
}

run_family latency 60
run_family descriptor 40
run_family bandwidth 90
run_family store_reduce 60
run_family multicast 60

# ------------------------------------------------------------------ traffic (ncu)
ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
metrics=dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum
ncu_note="complete"
t_ncu=$SECONDS
if [ -z "$ncu_bin" ]; then
  ncu_note="ncu not found"
  say "$ncu_note"
fi
if [ -x "$bin/bandwidth" ]; then
  "$bin/bandwidth" --list-traffic >"$work/ncu/points.csv"
  ntp=$(($(wc -l <"$work/ncu/points.csv") - 1))
  say "traffic: $ntp ncu points with $ncu_bin"
  for i in $(seq 0 $((ntp - 1))); do
    [ -n "$ncu_bin" ] || break
    remain=$(min 60 $(($(left) - 10)))
    if [ "$remain" -le 5 ]; then
      ncu_note="out of time at point $i"
      say "traffic: $ncu_note"
      break
    fi
    timeout -k 5 "$remain" "$ncu_bin" --clock-control none --metrics "$metrics" --csv --print-units base \
      --kernel-name regex:bw_stream --launch-count 1 "$bin/bandwidth" --traffic "$i" \
      >"$work/ncu/t$i.csv" 2>"$work/ncu/t$i.err"
    echo $? >"$work/ncu/t$i.rc"
    say "traffic point $i: ncu rc $(cat "$work/ncu/t$i.rc")"
  done
  python3 "$here/traffic_parse.py" --points "$work/ncu/points.csv" --raw "$work/ncu" --out "$out/traffic.csv" \
    2>>"$work/logs/traffic_parse.err" || say "traffic_parse failed"
  if [ -f "$out/traffic.csv" ]; then
    rows=$(($(wc -l <"$out/traffic.csv") - 1))
    okrows=$(grep -c ',ok$' "$out/traffic.csv")
    printf '  traffic: {points: %s, rows: %s, ok: %s, seconds: %s, note: "%s"}\n' "$ntp" "$rows" "$okrows" \
      $((SECONDS - t_ncu)) "$ncu_note" >>"$summary"
  fi
fi

# ------------------------------------------------------------------ L2 fetch size (ncu, run_fetch.sh)
if [ -n "$ncu_bin" ] && [ "$(left)" -gt 60 ]; then
  t_fetch=$SECONDS
  timeout -k 5 $(($(left) - 10)) bash "$here/run_fetch.sh" "$out" >"$work/logs/fetch.log" 2>&1
  say "fetch: rc $? in $((SECONDS - t_fetch))s"
  printf '  fetch: {seconds: %s, rows: %s}\n' $((SECONDS - t_fetch)) \
    "$(($(wc -l <"$out/fetch.csv" 2>/dev/null || echo 1) - 1))" >>"$summary"
else
  say "fetch: skipped (no ncu or out of time)"
fi

# ------------------------------------------------------------------ conditions, after
smi_after=$(smi_yaml)
kill "$smi_pid" 2>/dev/null
wait "$smi_pid" 2>/dev/null
smi_run=$(python3 - "$work/logs/smi_samples.csv" <<'EOF'
import csv, statistics, sys
try:
    rows = list(csv.reader(open(sys.argv[1])))
    hdr = [h.strip() for h in rows[0]]
    def col(name):
        i = next(k for k, h in enumerate(hdr) if h.startswith(name))
        out = []
        for r in rows[1:]:
            try:
                out.append(float(r[i]))
            except (ValueError, IndexError):
                pass
        return out
    for key, name in (("sm_mhz", "clocks.current.sm"), ("mem_mhz", "clocks.current.memory"),
                      ("power_w", "power.draw"), ("temperature_c", "temperature.gpu")):
        v = col(name)
        if v:
            print("  %s: {min: %g, median: %g, max: %g, samples: %d}" % (key, min(v), statistics.median(v), max(v), len(v)))
except Exception as e:  # noqa: BLE001
    print('  error: "%s"' % e)
EOF
)
nvcc_ver=$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)
smi_cuda=$(timeout 20 nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9.]*' | head -1 | sed 's/CUDA Version: *//')
ncu_ver=$([ -n "$ncu_bin" ] && "$ncu_bin" --version 2>/dev/null | tail -1)
{
  echo "# TMA calibration run: conditions (scripts/silicon/calib/run_calibration.sh)"
  echo "date_start_utc: \"$date_start\""
  echo "date_end_utc: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  echo "host: \"$(hostname)\""
  echo "wall_seconds: $((SECONDS - t_start))"
  echo "budget_seconds: $budget"
  echo "cuda_version_nvcc: \"${nvcc_ver:-unknown}\""
  echo "cuda_version_driver: \"${smi_cuda:-unknown}\""
  echo "ncu_version: \"${ncu_ver:-none}\""
  echo "device:"
  sed 's/^/  /' "$work/devinfo.yaml"
  echo "nvidia_smi_before:"
  echo "$smi_before"
  echo "nvidia_smi_after:"
  echo "$smi_after"
  echo "nvidia_smi_during_run:  # sampled every 500 ms (logs.tgz: logs/smi_samples.csv)"
  echo "${smi_run:-  none: true}"
  echo "families:"
  cat "$summary"
} >"$out/conditions.yaml"

say "done in $((SECONDS - t_start))s"
cp "$work/devinfo.yaml" "$work/logs/" 2>/dev/null
tar czf "$out/logs.tgz" -C "$work" logs ncu 2>/dev/null
ls -la "$out" | tee -a "$log"
du -ch "$out"/*.csv | tail -1
