#!/usr/bin/env bash
# tests/inputs/dim_2pow32.yaml: loads, a store and a reduction on a tensor with a dimension of
# exactly 2^32 elements. Every one traps on silicon and in the pipeline; the scoreboard's
# reference run on its packed copy of the tensor must trap too (it reported "reference ok,
# pipeline fault" for each), so: exit 0, no mismatch, and as many faults as operations.
set -euo pipefail
sim=$1
root=$2
rc=0
out=$("$sim" run "$root/tests/inputs/dim_2pow32.yaml" --quiet) || rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; exit 1; }
read -r loads stores reductions faults < <(echo "$out" |
  sed -nE 's/.* ([0-9]+) loads, ([0-9]+) stores, ([0-9]+) reductions, [0-9]+ prefetches, ([0-9]+) faults.*/\1 \2 \3 \4/p')
[ "$loads" -gt 0 ] && [ "$stores" -gt 0 ] && [ "$reductions" -gt 0 ] || { echo "FAIL: not every kind ran"; exit 1; }
[ $((loads + stores + reductions)) = "$faults" ] || { echo "FAIL: $faults faults of $((loads + stores + reductions))"; exit 1; }
echo "$out" | grep -q "checked against the reference engine, 0 mismatches" || { echo "FAIL: mismatches"; exit 1; }
echo "dim_2pow32: OK"
