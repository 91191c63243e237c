#!/usr/bin/env bash
# tma-sim sweep (docs/sweeps.md) on a small cross product (2 promotions x 2 shapes x 2 values of
# an architecture field): one CSV row per point with its parameters and every summary statistic,
# promotion effects where they must be, shards merged into the same CSV, and the plot script.
set -euo pipefail
sim=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=$(command -v python3 || echo /usr/bin/python3)

cat > "$work/s.yaml" <<EOF
name: small
scenario: $root/configs/sweeps/l2_promotion_stream.yaml
set: {sms: 4, workload.max_tiles_per_sm: 8}
parameters:
  - {name: promotion, set: descriptors.T_tile.l2_promotion, values: [none, 256B]}
  - name: shape
    values:
      - label: rows128B
        set: {tensors.T.dims: [64, 4096], descriptors.T_tile.box: [64, 64]}
      - label: rows64B_gaps
        set: {tensors.T.dims: [32, 4096], tensors.T.strides: [256], descriptors.T_tile.box: [32, 64]}
  - {name: l2_latency, arch: l2.hit_latency, values: [200, 400]}
EOF
"$sim" sweep "$work/s.yaml" --jobs 2 --out "$work/runs" --csv "$work/small.csv" --quiet >"$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "sweep failed"; }
[ "$(tail -1 "$work/out.txt")" = "8 passed, 0 failed" ] || fail "$(tail -1 "$work/out.txt")"
run=$(ls -d "$work"/runs/small-*)
cmp -s "$run/sweep.csv" "$work/small.csv" || fail "--csv differs from the run folder's sweep.csv"
"$py" - "$work/small.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, len(rows)
cols = list(rows[0])
assert cols[:5] == ["point", "promotion", "shape", "l2_latency", "status"], cols[:5]
for c in ("cycles", "load_bandwidth_gbs", "dram_read_bytes", "sectors_requested", "sector_hits", "overfetch_bytes",
          "scoreboard_mismatches"):
    assert c in cols, c
assert [r["point"] for r in rows] == sorted(r["point"] for r in rows)
assert rows[0]["point"] == "0-none-rows128B-200" and rows[7]["point"] == "7-256B-rows64B_gaps-400", [r["point"] for r in rows]
by = {(r["promotion"], r["shape"], r["l2_latency"]): r for r in rows}
for lat in ("200", "400"):
    gap_none, gap_256 = by[("none", "rows64B_gaps", lat)], by[("256B", "rows64B_gaps", lat)]
    assert int(gap_256["dram_read_bytes"]) >= 3.9 * int(gap_none["dram_read_bytes"]), (gap_none, gap_256)
    assert int(gap_none["overfetch_bytes"]) == 0 and int(gap_256["overfetch_bytes"]) > 0
    assert gap_none["sectors_requested"] == gap_256["sectors_requested"]
# A longer L2 hit latency takes more cycles.
assert int(by[("none", "rows128B", "400")]["cycles"]) > int(by[("none", "rows128B", "200")]["cycles"])
assert all(r["status"] == "pass" and r["scoreboard_mismatches"] == "0" for r in rows)
EOF
# Two shards merged give the same CSV.
"$sim" sweep "$work/s.yaml" --shard 0/2 --jobs 2 --out "$work/farm/shard-0" --quiet >/dev/null 2>&1
"$sim" sweep "$work/s.yaml" --shard 1/2 --jobs 2 --out "$work/farm/shard-1" --quiet >/dev/null 2>&1
"$sim" regress-merge "$work/farm" --out "$work/merged" --csv "$work/merged.csv" >/dev/null 2>&1 || fail "merge"
cmp -s "$work/small.csv" "$work/merged.csv" || { diff "$work/small.csv" "$work/merged.csv" | head; fail "merged sweep.csv differs"; }
# Plots (matplotlib from Debian's python3-matplotlib).
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 "$root/scripts/plot_sweep.py" "$work/small.csv" --out "$work/plots" >/dev/null
  for m in bandwidth dram_bytes l2_sectors overfetch l2_hit_rate; do
    [ -s "$work/plots/small_$m.png" ] || fail "no plot small_$m.png"
  done
else
  echo "matplotlib missing: plot_sweep.py not tested"
fi
echo "sweep: OK"
