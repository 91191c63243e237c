# Shared by run_workloads.sh and run_mechanisms.sh: run a family's points (restarting after a
# fault) and profile its traffic points with ncu. The caller sets: work (scratch folder with bin/,
# ncu/, logs/), say (log a line), left (seconds of the budget left).

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
