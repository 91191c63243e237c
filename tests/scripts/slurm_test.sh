#!/usr/bin/env bash
# scripts/slurm/regress.sh against a real single-node Slurm (Debian's slurm-wlm) that this test
# starts itself: a private munged, slurmctld and slurmd on localhost with their own ports, state
# and sockets in a temporary folder. It submits a 3-shard regression as a job array and its merge
# job, waits, and checks the merged report against the same list run without Slurm.
#
# Needs root (the daemons run as root). Installs slurm-wlm and munge with apt-get when they are
# missing (set TMA_SLURM_INSTALL=0 to forbid that). Exits 77 (ctest: skipped) with the reason
# when Slurm cannot be installed or started.
set -euo pipefail
sim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$2
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; dump; exit 1; }
dump() {
  for f in "$work"/log/*.log "$work"/farm/slurm/*.out; do
    [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }
  done
  return 0
}

[ "$(id -u)" = 0 ] || skip "the Slurm daemons need root (run the test as root)"
need=(munged slurmctld slurmd sbatch sinfo squeue scontrol)
missing() { for c in "${need[@]}"; do command -v "$c" >/dev/null || return 0; done; return 1; }
if missing; then
  [ "${TMA_SLURM_INSTALL:-1}" != 0 ] || skip "slurm-wlm/munge are not installed and TMA_SLURM_INSTALL=0"
  command -v apt-get >/dev/null || skip "slurm-wlm/munge are not installed and there is no apt-get"
  echo "installing slurm-wlm and munge with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
    { timeout 300 apt-get update -qq >/dev/null 2>&1 &&
      timeout 600 apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1; } ||
    skip "apt-get could not install slurm-wlm and munge"
  missing && skip "slurm-wlm is installed but some of ${need[*]} are missing"
fi

work=$(mktemp -d /tmp/tma-slurm-test.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  if [ -f "$work/slurm.conf" ]; then
    SLURM_CONF="$work/slurm.conf" scancel --quiet --user=root 2>/dev/null || true
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work"/{munge,state,spool,log,run}

# ---- munge: a private daemon with its own key and socket ----
dd if=/dev/urandom of="$work/munge/munge.key" bs=1 count=1024 status=none
chmod 600 "$work/munge/munge.key"
chmod 700 "$work/munge"
sock="$work/munge/munge.socket"
munged --force --foreground --socket="$sock" --key-file="$work/munge/munge.key" \
  --pid-file="$work/run/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/munge/seed" \
  >"$work/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { dump; skip "munged did not start (see the log above)"; }
echo ok | munge --socket="$sock" 2>/dev/null | unmunge --socket="$sock" >/dev/null 2>&1 ||
  { dump; skip "munge does not round-trip a credential"; }

# ---- slurm.conf for this host alone ----
host=$(hostname -s)
port=$((20000 + ($$ % 20000)))
cpus=$(nproc)
cat > "$work/slurm.conf" <<EOF
ClusterName=tmatest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=30
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -c -i >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 1 60); do
  state=$(sinfo -h -o %T 2>/dev/null | head -1 || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || { dump; skip "Slurm did not come up (node state '${state:-none}'; logs above)"; }
echo "Slurm $(sinfo -V | awk '{print $2}') up on $host: $cpus CPUs, partition test"

# ---- a regression of passes and failures, in 3 shards on the farm ----
{
  echo "lists:"
  echo "  farm:"
  echo "    tests:"
  for i in $(seq 0 9); do
    mode=pass
    [ "$i" = 4 ] && mode=fail
    [ "$i" = 7 ] && mode=crash
    echo "      - {name: job$i, selftest: $mode, args: [--seconds, \"0.2\"]}"
  done
  echo "      - name: stream"
  echo "        scenario: $root/configs/scenarios/stream_tiles.yaml"
  echo "        set: {sms: 4, workload.max_tiles_per_sm: 4}"
} > "$work/farm.yaml"

set +e
timeout 300 bash "$root/scripts/slurm/regress.sh" --shards 3 --out "$work/farm" --tma-sim "$sim" --wait \
  -- "$work/farm.yaml" >"$work/launch.txt" 2>&1
rc=$?
set -e
cat "$work/launch.txt"
[ "$rc" = 1 ] || fail "the merge job ended with $rc, expected 1 (the list has a failure and a crash)"
for k in 0 1 2; do
  [ -f "$work/farm/slurm/shard-$k.out" ] || fail "no output of array task $k"
  ls "$work/farm/shard-$k"/farm-*/plan.json >/dev/null 2>&1 || fail "array task $k made no run folder"
  grep -q "\"shard\": \"$k/3\"" "$work/farm/shard-$k"/farm-*/plan.json || fail "task $k did not run shard $k/3"
done
merged=$work/farm/merged
[ -f "$merged/junit.xml" ] && [ -f "$merged/summary.md" ] || fail "no merged report"
grep -q "9 passed, 2 failed" "$merged/summary.md" || fail "merged summary: $(head -1 "$merged/summary.md")"
grep -q "merged: 3 of 3 shards" "$merged/summary.md" || fail "not all shards merged"

# The same list without Slurm gives the same results.
set +e
"$sim" regress "$work/farm.yaml" --jobs 2 --out "$work/local" --quiet >/dev/null 2>&1
set -e
local_run=$(ls -d "$work"/local/farm-*)
cmp -s "$local_run/failures.csv" "$merged/failures.csv" || fail "failures.csv differs from the run without Slurm"
python3 - "$merged/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert s.get("tests") == "11" and s.get("failures") == "2", s.attrib
failed = {c.get("name"): c.find("failure").get("type") for c in s.findall("testcase") if c.find("failure") is not None}
assert failed == {"job4": "fail", "job7": "crash"}, failed
EOF
echo "slurm: OK"
