#!/usr/bin/env bash
# When two reads of one DRAM page share its opening (page_share.cu): 64 B halves of the same
# 128-byte rows (one line per 1 KB page) read by two partner CTAs, the second a set time or number
# of boxes behind, without and with 128B promotion; every point timed over 5 launches with every
# box's issue time logged, then profiled once with ncu. Leaves in OUTDIR:
#   page_share.csv              the 28 points (promotion, partners, lag in boxes, start delay)
#   page_share_traffic.csv      ncu per point: DRAM bytes, L2 sectors and lookup hits, duration
#   page_share_tiles.tgz        every box's issue time and each CTA's %smid, the last timed launch of each point
#   page_share_conditions.yaml  GPU, clocks, versions, the log
#   page_share_logs.tgz         logs
# About two minutes on an H200.
#
# usage: bash scripts/silicon/calib/run_page_share.sh OUTDIR [BUDGET_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_lib.sh"
start_run page_share 300 "$@"
build_programs page_share

rm -f "$out"/page_share*.csv
record_smi before
mkdir -p "$work/tiles"
timeout -k 5 120 "$work/bin/page_share" --out "$out/page_share.csv" --logs "$work/tiles" 2>"$work/logs/page_share.err"
say "page_share: rc $?, $(($(wc -l <"$out/page_share.csv") - 1)) rows"
tar czf "$out/page_share_tiles.tgz" -C "$work" tiles
# ncu, one launch a point (the second: the first only brings the clocks up), caches flushed before
n=$("$work/bin/page_share" --count)
for ((i = 0; i < n; ++i)); do
  [ "$(left)" -lt 40 ] && { say "ncu: out of time at point $i"; break; }
  timeout -k 5 60 "$ncu_bin" --clock-control none --cache-control all --metrics "$metrics" --csv --print-units base \
    --kernel-name regex:ps_stream --launch-skip 1 --launch-count 1 "$work/bin/page_share" --out "$work/ncu/discard.csv" \
    --only "$i" --reps 1 >"$work/ncu/p$i.csv" 2>"$work/ncu/p$i.err"
done
say "ncu done"
"$work/bin/page_share" --list >"$work/ncu/points.csv"
python3 - "$here" "$work/ncu" "$out/page_share_traffic.csv" <<'PY'
import csv, os, sys
sys.path.insert(0, sys.argv[1])
from ncu_space import parse_chunk
from traffic_parse import fmt
raw, out = sys.argv[2], sys.argv[3]
points = list(csv.DictReader(open(os.path.join(raw, "points.csv"))))
names = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
         "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
         "lts__t_sectors_op_read.sum", "gpu__time_duration.sum"]
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(list(points[0].keys()) + ["dram_read_bytes", "dram_write_bytes", "tex_sectors", "tex_hit_sectors",
                                          "tex_miss_sectors", "lts_read_sectors", "duration_ns", "status"])
    for p in points:
        path = os.path.join(raw, "p%s.csv" % p["point"])
        launches = parse_chunk(open(path, errors="replace").read()) if os.path.exists(path) else {}
        vals = next(iter(launches.values()), {})
        ok = all(n in vals for n in names)
        w.writerow(list(p.values()) + [fmt(vals.get(n)) for n in names] + ["ok" if ok else "no_metrics"])
PY
write_conditions "page_share.csv (scripts/silicon/calib/run_page_share.sh)" >"$out/page_share_conditions.yaml"
tar czf "$out/page_share_logs.tgz" -C "$work" logs ncu
cat "$out/page_share.csv" "$out/page_share_traffic.csv"
say "done"
