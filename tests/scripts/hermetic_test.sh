#!/usr/bin/env bash
# ctest must not change the machine unasked: no test may install packages or start daemons
# (Slurm's slurmctld, slurmd and munged) unless it was asked for. tests/scripts/slurm_test.sh does
# both, so its test exists only with -DTMA_TEST_SLURM=ON (.ci/run opts in) and carries the label
# "system". This reads the commands of every other test of the build (ctest --show-only) and the
# shell scripts they run, and fails on a line that runs apt-get, apt, dpkg, systemctl, service or
# a Slurm or munge daemon.
set -euo pipefail
ctest=$1
build=$2
"$ctest" --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, os, re, sys
runs = re.compile(r"^\s*[^#]*\b(apt-get|apt|dpkg|systemctl|service|slurmctld|slurmd|munged)\b")
quoted = re.compile(r"^\s*(echo|printf)\b")
bad = []
for test in json.load(sys.stdin)["tests"]:
    labels = [p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"]
    if any("system" in l for l in labels):
        continue  # asked for (-DTMA_TEST_SLURM=ON)
    for arg in test.get("command") or []:
        if not (arg.endswith(".sh") and os.path.isfile(arg)):
            continue
        for n, line in enumerate(open(arg, errors="replace"), 1):
            if runs.search(line) and not quoted.search(line):
                bad.append("%s: %s:%d: %s" % (test["name"], arg, n, line.strip()))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
'
echo "hermetic: OK"
