# Shared by the run_*.sh scripts: set up a run (OUTDIR, budget,
# scratch folder), build the programs, run a family's points (restarting after a fault), profile its
# traffic points with ncu, write the conditions file. Sourced with the caller's "$@" handled by
# start_run.

# source_at SRCDIR COMMIT PROG PREFIX SUBDIR: PROG.cu and calib_common.cuh as COMMIT had them, copied
# into SRCDIR/PREFIXBLOB-BLOB/SUBDIR (the folder named by the two files' blobs, so that the commits of
# one build share it); prints the folder. run_builds.sh and run_kernel_costs.sh prepare their
# builds so.
source_at() {
  local src=$1 c=$2 prog=$3 prefix=$4 sub=$5 b h d
  b=$(git -C "$here" rev-parse "$c:scripts/silicon/calib/$prog.cu" | cut -c1-8)
  h=$(git -C "$here" rev-parse "$c:scripts/silicon/calib/calib_common.cuh" | cut -c1-8)
  d="$src/$prefix$b-$h"
  mkdir -p "$d/$sub"
  git -C "$here" show "$c:scripts/silicon/calib/$prog.cu" >"$d/$sub/$prog.cu"
  git -C "$here" show "$c:scripts/silicon/calib/calib_common.cuh" >"$d/$sub/calib_common.cuh"
  echo "$d"
}

# start_run NAME DEFAULT_BUDGET "$@": out (OUTDIR, made), budget (seconds), work (scratch: bin/,
# ncu/, logs/), say (a log line), left (seconds of the budget left).
start_run() {
  local name=$1 default_budget=$2
  shift 2
  [ $# -ge 1 ] || { echo "usage: run_$name.sh OUTDIR [BUDGET_S]" >&2; exit 2; }
  mkdir -p "$1" || exit 2
  out=$(cd "$1" && pwd)
  budget=${2:-$default_budget}
  work=$(mktemp -d "${TMPDIR:-/tmp}/tma_$name.XXXXXX")
  mkdir -p "$work/bin" "$work/ncu" "$work/logs"
}
say() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$work/logs/run.log"; }
left() { echo $((budget - SECONDS)); }

# Builds the programs named (here/NAME.cu, and devinfo) in parallel into work/bin; exits on a failure.
build_programs() {
  local p
  for p in "$@" devinfo; do
    (nvcc -O2 -std=c++17 -arch=sm_90a -o "$work/bin/$p" "$here/$p.cu" -lcuda >"$work/logs/build_$p.log" 2>&1 ||
      echo "build of $p failed" >>"$work/logs/build_failed") &
  done
  wait
  [ -f "$work/logs/build_failed" ] && { cat "$work/logs/build_failed" "$work/logs"/build_*.log >&2; exit 1; }
  say "built"
}

# One family from point `first` on, restarted after a fault at the point after it, within `cap` s.
run_family() {
  local prog=$1 cap=$2 csv=$3 start=$4 n rc t0=$SECONDS
  n=$("$work/bin/$prog" --count)
  rm -f "$csv"
  while [ "$start" -lt "$n" ] && [ $((SECONDS - t0)) -lt "$cap" ] && [ "$(left)" -gt 30 ]; do
    timeout -k 5 $((cap - (SECONDS - t0))) "$work/bin/$prog" --out "$csv" --start "$start" \
      --next "$work/next_$prog" 2>>"$work/logs/$prog.err"
    rc=$?
    local next
    next=$(cat "$work/next_$prog" 2>/dev/null || echo "$n")
    if [ "$rc" -ne 0 ] && [ "$next" -lt "$n" ]; then
      if [ "$rc" -ne 3 ]; then
        "$work/bin/$prog" --out "$csv" --mark-fault "$next" --status "fault:rc$rc" 2>/dev/null
        next=$((next + 1))
      fi
      say "$prog: rc $rc, restarting at point $next"
    fi
    [ "$rc" -eq 0 ] && break
    start=$next
  done
  say "$prog: $(($(wc -l <"$csv") - 1)) rows from point $4 of $n in $((SECONDS - t0)) s"
}

ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum
profile() {  # prog kernel chunk [from to]
  local prog=$1 kernel=$2 chunk=$3 i n
  "$work/bin/$prog" --list-traffic >"$work/ncu/${prog}_points.csv"
  n=$(($(wc -l <"$work/ncu/${prog}_points.csv") - 1))
  local lo=${4:-0} hi=${5:-$n}
  for ((i = lo; i < hi; i += chunk)); do
    if [ "$(left)" -lt 40 ]; then say "$prog ncu: out of time at traffic point $i"; break; fi
    local to=$((i + chunk < hi ? i + chunk : hi))
    timeout -k 5 $(($(left) - 20)) "$ncu_bin" --replay-mode application --cache-control none --clock-control none \
      --metrics "$metrics" --csv --print-units base --kernel-name "regex:$kernel" \
      "$work/bin/$prog" --traffic-all --from "$i" --to "$to" \
      >"$work/ncu/${prog}_t$(printf %03d "$i").csv" 2>"$work/ncu/${prog}_t$(printf %03d "$i").err"
    say "$prog ncu chunk $i-$to: rc $?"
  done
}

# keep_points CSV FIRST LAST: only points FIRST..LAST of a family's CSV (run_family runs a family
# from its first point to the program's last, which takes in the groups appended after).
keep_points() {
  awk -F, -v lo="$2" -v hi="$3" 'NR == 1 || ($1 >= lo && $1 <= hi)' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

# traffic_range FIRST LAST: "lo hi", the traffic-list indices (space --list-traffic) of points
# FIRST..LAST, for profile; exits when the list has none of them.
traffic_range() {
  "$work/bin/space" --list-traffic >"$work/traffic_list.csv"
  local r
  r=$(awk -F, -v lo="$1" -v hi="$2" 'NR > 1 && $2 >= lo && $2 <= hi {if (a == "") a = $1; b = $1 + 1} END {if (a != "") print a, b}' \
    "$work/traffic_list.csv")
  [ -n "$r" ] || { say "no traffic points among $1-$2" >&2; exit 1; }
  echo "$r"
}

# The GPU's clocks, temperature and power now, in logs/smi_NAME.csv.
record_smi() {
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv >"$work/logs/smi_$1.csv" 2>&1
}

# The conditions of a run as YAML on stdout: what it measured (`title`), the date, the tools'
# versions, the device, nvidia-smi before (logs/smi_before.csv) and now, each extra
# "name=FILE" as a literal block, and the run's log.
# archive_ncu NAME: the raw ncu output and the logs (each program's stderr beside its ncu files)
# into OUTDIR/NAME_ncu.tgz, for ncu_space.py.
archive_ncu() {
  cp "$work/logs"/*.err "$work/ncu/" 2>/dev/null
  tar czf "$out/$1_ncu.tgz" -C "$work" ncu logs
}

write_conditions() {  # title [name=file]...
  local title=$1
  shift
  record_smi after
  echo "# conditions of $title"
  echo "date_end_utc: \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  echo "wall_seconds: $SECONDS"
  echo "cuda_version_nvcc: \"$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)\""
  echo "ncu_version: \"$("$ncu_bin" --version 2>/dev/null | tail -1)\""
  echo "device:"
  "$work/bin/devinfo" 2>/dev/null | sed 's/^/  /'
  echo "nvidia_smi_before: |"
  sed 's/^/  /' "$work/logs/smi_before.csv"
  echo "nvidia_smi_after: |"
  sed 's/^/  /' "$work/logs/smi_after.csv"
  local extra
  for extra in "$@"; do
    echo "${extra%%=*}: |"
    sed 's/^/  /' "${extra#*=}"
  done
  echo "log: |"
  sed 's/^/  /' "$work/logs/run.log"
}
