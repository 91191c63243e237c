#!/usr/bin/env bash
# Fault injection into tma-sim regress (docs/regressions.md): a crashing, an aborting, a hanging,
# a failing and a bad-input job among passing ones (real check and run jobs included) must fail
# only themselves, with complete results, JUnit and summary, and replay commands that reproduce
# them; SIGINT in the middle of a run must keep what finished, end the running jobs and write
# the reports, and --resume must run only what did not finish.
set -euo pipefail
sim=$1
root=$2
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=$(command -v python3 || echo /usr/bin/python3)

# ---- 1. crash, abort, hang, fail, bad input ----
cat > "$work/faults.yaml" <<EOF
defaults: {timeout: 120}
lists:
  faults:
    tests:
      - {name: pass_a, selftest: pass}
      - {name: pass_b, selftest: pass, args: [--seconds, "0.2"]}
      - {name: golden_ref, golden: $root/tests/golden/silicon}
      - name: stream_8sm
        scenario: $root/configs/scenarios/stream_tiles.yaml
        set: {sms: 8, workload.max_tiles_per_sm: 8}
      - {name: crash, selftest: crash}
      - {name: abort, selftest: abort}
      - {name: hang, selftest: hang, timeout: 1}
      - {name: fail_1, selftest: fail}
      - {name: fail_2, selftest: fail}
      - {name: bad_input, golden: $work/badcase}
EOF
# Bad input only a job can find (a scenario and its overrides are checked when the file is read):
# a golden case that does not load.
mkdir -p "$work/badcase"
printf 'colour: red\n' > "$work/badcase/bad.yaml"
start=$(date +%s)
set +e
"$sim" regress "$work/faults.yaml" --jobs 3 --out "$work/runs" --junit "$work/junit.xml" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
set -e
cat "$work/out.txt"
[ "$rc" = 1 ] || fail "regress exited $rc, expected 1 (failures)"
[ $(( $(date +%s) - start )) -lt 60 ] || fail "the run took too long (the hang must be killed after its timeout)"
run=$(ls -d "$work"/runs/faults-*)
[ "$(ls "$run/results" | wc -l)" = 10 ] || fail "expected 10 results, got: $(ls "$run/results")"
[ "$(tail -1 "$work/out.txt")" = "4 passed, 6 failed" ] || fail "last line: $(tail -1 "$work/out.txt")"
cmp -s "$work/junit.xml" "$run/junit.xml" || fail "--junit differs from the run folder's junit.xml"
"$py" - "$work/junit.xml" "$run" <<'EOF'
import csv, json, os, sys, xml.etree.ElementTree as ET
junit, run = sys.argv[1], sys.argv[2]
root = ET.parse(junit).getroot()
suite = root.find("testsuite")
assert suite.get("tests") == "10" and suite.get("failures") == "6", suite.attrib
cases = {c.get("name"): c for c in suite.findall("testcase")}
assert sorted(cases) == list(cases), "testcases not sorted by id"
want = {"pass_a": None, "pass_b": None, "golden_ref": None, "stream_8sm": None, "crash": "crash",
        "abort": "crash", "hang": "timeout", "fail_1": "fail", "fail_2": "fail", "bad_input": "error"}
for name, kind in want.items():
    c = cases[name]
    f = c.find("failure")
    if kind is None:
        assert f is None, name
    else:
        assert f is not None and f.get("type") == kind, (name, f.attrib if f is not None else None)
        assert "replay: " in f.text, name
    assert c.find("system-out") is not None, name
assert cases["crash"].find("failure").get("message") == "SIGSEGV"
assert cases["abort"].find("failure").get("message").startswith("SIGABRT")
assert "selftest: pid" in cases["crash"].find("system-out").text
res = {n: json.load(open(os.path.join(run, "results", n + ".json"))) for n in want}
assert res["hang"]["status"] == "timeout" and res["hang"]["signal"] == 9, res["hang"]  # SIGTERM ignored: SIGKILL
assert res["hang"]["seconds"] < 10
assert res["fail_1"]["signature"] == res["fail_2"]["signature"] == "selftest: case # at 0x#: smem byte #: expected 0x#, got 0x#"
assert "unknown key 'colour'" in res["bad_input"]["signature"], res["bad_input"]
groups = list(csv.DictReader(open(os.path.join(run, "failures.csv"))))
assert groups[0]["count"] == "2" and groups[0]["jobs"] == "fail_1 fail_2", groups
assert sum(int(g["count"]) for g in groups) == 6
rows = list(csv.DictReader(open(os.path.join(run, "summary.csv"))))
assert [r["id"] for r in rows] == sorted(want), [r["id"] for r in rows]
md = open(os.path.join(run, "summary.md")).read()
assert "4 passed, 6 failed" in md and "## Failures by signature" in md and "## Replay" in md
EOF
# A failure as it happens shows the job's own line, numbers as written (the signature's '#' are for
# grouping only).
grep -qF "FAIL fail_1 (fail): selftest: case 17 at 0x7f3a10: smem byte 4096: expected 0x12, got 0x34" "$work/err.txt" ||
  fail "progress line of fail_1: $(grep 'FAIL fail_1' "$work/err.txt")"
grep -qF "FAIL bad_input (error): $work/badcase/bad.yaml:1: field 'colour'" "$work/err.txt" ||
  fail "progress line of bad_input: $(grep 'FAIL bad_input' "$work/err.txt")"
# And so does the end-of-run list of failures (stdout); the signatures only group them.
grep -qF "FAILED fail_1 (fail): selftest: case 17 at 0x7f3a10: smem byte 4096: expected 0x12, got 0x34" "$work/out.txt" ||
  fail "end-of-run line of fail_1: $(grep 'FAILED fail_1' "$work/out.txt")"
# Every replay command reproduces its job's outcome.
replay() { grep -A1 "^FAILED $1 " "$work/out.txt" | sed -n 's/^  replay: //p'; }
set +e
eval "$(replay fail_1)" >/dev/null; [ $? = 1 ] || fail "replay of fail_1 did not fail with exit 1"
eval "$(replay bad_input)" >/dev/null 2>&1; [ $? = 2 ] || fail "replay of bad_input did not exit 2"
eval "$(replay crash)" >/dev/null 2>&1; [ $? = 139 ] || fail "replay of crash did not crash"
set -e
# The hang was killed with its process group.
hang_pid=$(sed -n 's/^selftest: pid //p' "$run/logs/hang.log")
! kill -0 "$hang_pid" 2>/dev/null || fail "the hanging job $hang_pid is still alive"

# ---- 2. a bad regression file: exit 2, file, line and field ----
printf 'lists:\n  a:\n    tests:\n      - {name: x, selftest: pass, colour: red}\n' > "$work/bad.yaml"
set +e
"$sim" regress "$work/bad.yaml" --out "$work/runs" 2>"$work/bad.txt"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad file gave exit $rc, expected 2"
grep -q "bad.yaml:4: field 'lists.a.tests\[0\].colour': unknown key" "$work/bad.txt" || fail "error: $(cat "$work/bad.txt")"
# A bad override of a scenario job: refused before anything runs (no run folder), at its line,
# with the value as written.
cat > "$work/bad_set.yaml" <<EOF
lists:
  a:
    tests:
      - {name: ok, selftest: pass}
      - name: bad
        scenario: $root/configs/scenarios/stream_tiles.yaml
        set: {sms: 2, descriptors.T_tile.box: [300, 64]}
EOF
set +e
"$sim" regress "$work/bad_set.yaml" --out "$work/runs_bad" 2>"$work/bad_set.txt"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad override gave exit $rc, expected 2"
[ ! -e "$work/runs_bad" ] || fail "a bad override still made a run folder"
grep -q "bad_set.yaml:7: field 'lists.a.tests\[1\].set.descriptors.T_tile.box': override 'descriptors.T_tile.box=\[300, 64\]'.*value 300 is outside" \
  "$work/bad_set.txt" || fail "error: $(cat "$work/bad_set.txt")"

# ---- 3. SIGINT, then --resume ----
cat > "$work/intr.yaml" <<EOF
lists:
  intr:
    tests:
      - {name: a1, selftest: pass}
      - {name: a2, selftest: pass}
      - {name: a3, selftest: fail}
      - {name: a4, selftest: pass}
      - {name: w1, selftest: pass, args: [--until-file, $work/go]}
      - {name: w2, selftest: pass, args: [--until-file, $work/go]}
      - {name: w3, selftest: pass, args: [--until-file, $work/go]}
      - {name: w4, selftest: pass, args: [--until-file, $work/go]}
EOF
"$sim" regress "$work/intr.yaml" --jobs 2 --out "$work/runs2" --junit "$work/j2.xml" >"$work/i.txt" 2>"$work/i.err" &
pid=$!
for _ in $(seq 1 200); do  # until the quick jobs finished and two waiters run
  n=$(find "$work/runs2" -path '*/results/*.json' 2>/dev/null | wc -l || true)
  w=$(find "$work/runs2" -path '*/logs/w*.log' 2>/dev/null | wc -l || true)
  [ "$n" -ge 4 ] && [ "$w" -ge 2 ] && break
  sleep 0.1
done
sleep 0.3
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=
cat "$work/i.txt"
[ "$rc" = 130 ] || fail "interrupted regress exited $rc, expected 130"
run2=$(ls -d "$work"/runs2/intr-*)
[ "$(ls "$run2/results" | wc -l)" = 4 ] || fail "expected the 4 finished results, got: $(ls "$run2/results")"
grep -q "3 passed, 1 failed, 4 not run" "$work/i.txt" || fail "summary line after SIGINT"
grep -q "The run was interrupted" "$run2/summary.md" || fail "summary.md does not say the run was interrupted"
"$py" - "$work/j2.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
# The jobs the interrupt left unfinished are errors (a dashboard must not show the run green).
assert s.get("tests") == "8" and s.get("failures") == "1" and s.get("errors") == "4" and s.get("skipped") == "0", s.attrib
not_run = [c.get("name") for c in s.findall("testcase") if c.find("error") is not None]
assert not_run == ["w1", "w2", "w3", "w4"], not_run
EOF
for log in "$run2"/logs/w*.log; do  # the running waiters were ended
  p=$(sed -n 's/^selftest: pid //p' "$log")
  [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null || fail "job $p of $log is still alive"
done
before=$(cat "$run2"/results/a*.json | md5sum)
touch "$work/go"
set +e
"$sim" regress --resume "$run2" --junit "$work/j3.xml" >"$work/r.txt" 2>"$work/r.err"
rc=$?
set -e
cat "$work/r.err"
[ "$rc" = 1 ] || fail "resume exited $rc, expected 1 (a3 fails)"
grep -q "4 jobs left of 8" "$work/r.err" || fail "resume should run the 4 unfinished jobs only"
[ "$(cat "$run2"/results/a*.json | md5sum)" = "$before" ] || fail "resume touched finished results"
[ "$(tail -1 "$work/r.txt")" = "7 passed, 1 failed" ] || fail "after resume: $(tail -1 "$work/r.txt")"
"$py" - "$work/j3.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert s.get("tests") == "8" and s.get("failures") == "1" and s.get("errors") == "0" and s.get("skipped") == "0", s.attrib
EOF
# Resuming a finished run runs nothing.
set +e
"$sim" regress --resume "$run2" >/dev/null 2>"$work/r2.err"
set -e
grep -q "0 jobs left of 8" "$work/r2.err" || fail "a second resume should have nothing to do"

# ---- 4. run folders are never reused ----
printf 'lists:\n  u:\n    tests:\n      - {name: x, selftest: pass}\n' > "$work/u.yaml"
"$sim" regress "$work/u.yaml" --out "$work/runs3" --quiet >/dev/null
"$sim" regress "$work/u.yaml" --out "$work/runs3" --quiet >/dev/null
[ "$(ls -d "$work"/runs3/u-* | wc -l)" = 2 ] || fail "two runs should make two folders: $(ls "$work/runs3")"
echo "regress fault injection: OK"
