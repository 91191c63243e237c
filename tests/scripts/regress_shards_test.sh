#!/usr/bin/env bash
# Shards of a regression (docs/regressions.md): --shard K/N splits the id-sorted job list (job i
# to shard i % N) into disjoint parts that cover it; regress-merge of the shard folders gives the
# report of the unsharded run; a missing shard shows as jobs not run; and the report does not
# depend on the order jobs finish in (--jobs 1 and --jobs 4 with jobs of opposite durations).
set -euo pipefail
sim=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=$(command -v python3 || echo /usr/bin/python3)

# 13 jobs: passes and fails of two signatures, generator-style ids; early ids run longest.
{
  echo "lists:"
  echo "  main:"
  echo "    tests:"
  for i in $(seq 0 12); do
    mode=pass
    [ $((i % 4)) = 1 ] && mode=fail
    [ $((i % 5)) = 3 ] && mode=error
    secs=$(awk "BEGIN { print (12 - $i) * 0.03 }")
    echo "      - {name: job$(printf %02d "$i"), selftest: $mode, args: [--seconds, \"$secs\"]}"
  done
} > "$work/r.yaml"

# Dry runs: the shards partition the sorted list, job i in shard i % 3.
for k in 0 1 2; do
  "$sim" regress "$work/r.yaml" --shard "$k/3" --dry-run | sed -n 's/^\(job[0-9]*\)  .*/\1/p' > "$work/dry$k.txt"
done
cat "$work"/dry*.txt | sort > "$work/union.txt"
"$sim" regress "$work/r.yaml" --dry-run | sed -n 's/^\(job[0-9]*\)  .*/\1/p' | sort > "$work/all.txt"
cmp -s "$work/union.txt" "$work/all.txt" || fail "shards do not cover the list exactly once"
[ "$(sort -u "$work/union.txt" | wc -l)" = 13 ] || fail "shards overlap"
[ "$(tr '\n' ' ' < "$work/dry1.txt")" = "job01 job04 job07 job10 " ] || fail "shard 1/3 is $(cat "$work/dry1.txt")"

# The whole list, one job at a time and four at a time (finishing order differs).
set +e
"$sim" regress "$work/r.yaml" --jobs 1 --out "$work/one" --quiet >"$work/one.txt" 2>/dev/null; rc1=$?
"$sim" regress "$work/r.yaml" --jobs 4 --out "$work/four" --quiet >"$work/four.txt" 2>/dev/null; rc4=$?
set -e
[ "$rc1" = 1 ] && [ "$rc4" = 1 ] || fail "exit $rc1 / $rc4, expected 1"
one=$(ls -d "$work"/one/main-*)
four=$(ls -d "$work"/four/main-*)
cmp -s "$one/failures.csv" "$four/failures.csv" || fail "failures.csv depends on the finishing order"

# Three shards into shard-K folders (as the Slurm launcher does), then merged.
for k in 0 1 2; do
  "$sim" regress "$work/r.yaml" --shard "$k/3" --jobs 2 --out "$work/farm/shard-$k" --quiet >/dev/null 2>&1 || true
done
set +e
"$sim" regress-merge "$work/farm" --out "$work/merged" --junit "$work/merged.xml" >"$work/merge.txt" 2>"$work/merge.err"
rc=$?
set -e
cat "$work/merge.txt"
[ "$rc" = 1 ] || fail "merge exited $rc, expected 1 (the list has failures)"
[ "$(tail -1 "$work/merge.txt")" = "$(tail -1 "$work/one.txt")" ] || fail "merged counts differ from the unsharded run"
cmp -s "$one/failures.csv" "$work/merged/failures.csv" || fail "merged failures.csv differs from the unsharded run"
grep -q "3 run folders, merged: 3 of 3 shards" "$work/merge.err" || fail "merge: $(cat "$work/merge.err")"
"$py" - "$one/summary.csv" "$work/merged/summary.csv" "$work/merged.xml" <<'EOF'
import csv, sys, xml.etree.ElementTree as ET
cols = ("id", "kind", "status", "exit_code", "signature", "first_failing_line")
a = [tuple(r[c] for c in cols) for r in csv.DictReader(open(sys.argv[1]))]
b = [tuple(r[c] for c in cols) for r in csv.DictReader(open(sys.argv[2]))]
assert a == b, (a, b)
s = ET.parse(sys.argv[3]).getroot().find("testsuite")
assert s.get("tests") == "13", s.attrib
assert [c.get("name") for c in s.findall("testcase")] == [r[0] for r in a]
EOF

# A missing shard: its jobs are not run, and the merge says which shard is missing.
set +e
"$sim" regress-merge "$work/farm/shard-0" "$work/farm/shard-2" --out "$work/merged2" >"$work/m2.txt" 2>"$work/m2.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "merge with a missing shard exited $rc"
grep -q "4 not run" "$work/m2.txt" || fail "missing shard: $(tail -1 "$work/m2.txt")"
grep -q "missing: 1" "$work/m2.err" || fail "the merge should name the missing shard: $(cat "$work/m2.err")"
# Folders of different runs do not merge.
"$sim" regress "$work/r.yaml" --list main --seed 5 --shard 0/2 --out "$work/other" --quiet >/dev/null 2>&1 || true
set +e
"$sim" regress-merge "$work/farm" "$work/other" --out "$work/merged3" >/dev/null 2>"$work/m3.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "merging different runs exited $rc, expected 2"
echo "regress shards and merge: OK"
