#!/usr/bin/env bash
# The CPC pools and the in-order slices together (tma.cpc_outstanding_requests, l2.in_order_slices,
# docs/calibration.md "CPC pools and in-order slices"): a DRAM-bound column-ordered stream of
# 32 B x 256 boxes, 128B promotion, 2 CTAs per SM, whose four CTAs of a line are on different SMs.
# With both rules the SMs of the 4-SM CPCs (h100.yaml's cpc_of_sm) keep more requests in flight,
# run ahead and stay ahead, and the lines they share with the others are read from DRAM twice, as
# on silicon (tests/calibration/h100/space_tile_times.csv.gz); without them every SM ends together
# and each line is read once. A 16 MB L2 and a 128 MB tensor keep the runs short. Far reads take
# only what they ask across (l2.far_read_takes_span 0): in so small an L2 the near copies of whole
# promoted lines take enough room to evict lines before their next column, whatever the SMs do.
set -euo pipefail
sim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat >"$out/stream.yaml" <<'YAML'
name: column_stream
sms: 132
tensors:
  T: {dtype: bf16, dims: [8192, 8192], address: 0x100000000}
descriptors:
  L: {tensor: T, box: [16, 256], swizzle: none, l2_promotion: 128B}
workload: {kind: stream, load: L, stages: 4, tile_order: column_major, max_tiles_per_sm: 0, compute_cycles: 340,
           ctas_per_sm: 2}
YAML
run() {  # name extra-args...
  local name=$1
  shift
  "$sim" run "$out/stream.yaml" --arch "$root/configs/arch/h100.yaml" --quiet --no-scoreboard \
    --arch-set l2.capacity_bytes=16777216 --arch-set l2.far_read_takes_span=0 --stats "$out/$name.json" "$@" >/dev/null
}
run off --arch-set tma.cpc_outstanding_requests=0 --arch-set l2.in_order_slices=0
run on --arch-set tma.cpc_outstanding_requests=3072 --arch-set tma.max_outstanding_requests=768 \
  --arch-set l2.in_order_slices=64
# The mean end of the SMs in 4-SM CPCs and of the others (fractions of the run), and DRAM bytes
# read per byte of the tensor.
figures() {
  python3 - "$out/$1.json" <<'PY'
import json, statistics, sys
stats = json.load(open(sys.argv[1]))
cpc = stats["config"]["arch"]["fields"]["tma"]["cpc_of_sm"]  # as the run resolved h100.yaml
size = {c: cpc.count(c) for c in set(cpc)}
end = [stats["cta%d" % sm]["finish_cycle"] for sm in range(132)]
last = max(end)
fast = [end[sm] / last for sm in range(132) if size[cpc[sm]] == 4]
slow = [end[sm] / last for sm in range(132) if size[cpc[sm]] != 4]
print("%.3f %.3f %.3f" % (statistics.mean(fast), statistics.mean(slow), stats["summary.dram_read_bytes"] / (128 << 20)))
PY
}
off=$(figures off) && on=$(figures on) || { echo "FAIL: reading the statistics"; exit 1; }
read -r off_fast off_slow off_bytes <<<"$off"
read -r on_fast on_slow on_bytes <<<"$on"
echo "off: 4-SM CPCs end at $off_fast, the others at $off_slow, DRAM $off_bytes bytes per byte"
echo "on:  4-SM CPCs end at $on_fast, the others at $on_slow, DRAM $on_bytes bytes per byte"
fail=0
check() { if python3 -c "import sys; sys.exit(0 if ($1) else 1)"; then echo "ok: $2"; else echo "FAIL: $2 ($1)"; fail=1; fi; }
check "abs($off_fast - $off_slow) < 0.03 and $off_bytes < 1.01" "without the rules every SM ends together and each line is read once"
check "$on_fast < 0.9 * $on_slow" "with them the 4-SM CPCs' SMs end at most 0.9 of the others' time"
check "$on_bytes > 1.2" "and the lines they share are read from DRAM again (more than 1.2 bytes per byte)"
exit $fail
