#!/usr/bin/env bash
# Changing a scenario's L2 promotion must change its L2 and DRAM traffic the way promotion works.
# The tensor's rows are 128 bytes of data in a 256-byte stride, so a 256B promotion fetches
# each row's unused neighbour too (twice the DRAM bytes, half of them over-fetch), while 64B and
# 128B fetch exactly what is asked for, as no promotion does.
set -euo pipefail
sim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # promotion -> stats file
  "$sim" run "$root/configs/scenarios/stream_tiles.yaml" --quiet --set sms=8 --set workload.max_tiles_per_sm=16 \
    --set 'tensors.T.dims=[64, 131072]' --set 'tensors.T.strides=[256]' \
    --set descriptors.T_tile.l2_promotion="$1" --stats "$out/$1.json" >/dev/null
}
field() { grep -o "\"summary.$2\": [0-9.e+-]*" "$out/$1.json" | grep -o '[0-9][0-9.e+-]*' | tail -1; }  # a JSON number
for p in none 64B 128B 256B; do run "$p"; done
dram_none=$(field none dram_read_bytes); dram_64=$(field 64B dram_read_bytes)
dram_128=$(field 128B dram_read_bytes); dram_256=$(field 256B dram_read_bytes)
over_none=$(field none overfetch_bytes); over_256=$(field 256B overfetch_bytes)
req_none=$(field none sectors_requested); req_256=$(field 256B sectors_requested)
echo "DRAM bytes: none $dram_none, 64B $dram_64, 128B $dram_128, 256B $dram_256; over-fetch none $over_none, 256B $over_256"
fail=0
[ "$dram_128" = "$dram_none" ] && [ "$dram_64" = "$dram_none" ] ||
  { echo "FAIL: 64B and 128B promotion should fetch what none fetches (rows are 128 aligned bytes)"; fail=1; }
[ "$dram_256" -gt "$((dram_none * 19 / 10))" ] || { echo "FAIL: 256B promotion should about double DRAM bytes"; fail=1; }
[ "$over_none" = 0 ] || { echo "FAIL: no promotion, no over-fetch"; fail=1; }
[ "$over_256" -gt 0 ] || { echo "FAIL: 256B promotion must over-fetch"; fail=1; }
[ "$req_none" = "$req_256" ] || { echo "FAIL: the SMs ask for the same sectors whatever the promotion"; fail=1; }
exit $fail
