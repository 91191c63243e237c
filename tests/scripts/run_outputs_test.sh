#!/usr/bin/env bash
# What tma-sim run writes (docs/scenarios.md): one mode per ctest test.
#
#   run_outputs_test.sh TMA_SIM ROOT stats      --stats: valid JSON, numbers as numbers, the resolved
#                                               configuration (scenario after --set, the whole
#                                               architecture after --arch-set, the tool's version)
set -euo pipefail
sim=$1
root=$2
what=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=$(command -v python3 || echo /usr/bin/python3)
gemm="$root/configs/scenarios/gemm_bf16.yaml"
small=(--set sms=8 --set workload.m=512 --set workload.n=512 --set workload.k=256)

case "$what" in
  stats)
    "$sim" run "$gemm" "${small[@]}" --arch-set l2.hit_latency=301 --quiet --stats "$work/s.json" >"$work/out.txt" ||
      fail "run failed: $(cat "$work/out.txt")"
    "$py" - "$work/s.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
summary = {k[len("summary."):]: v for k, v in s.items() if k.startswith("summary.")}
assert summary, "no summary.* keys"
for k, v in summary.items():
    if k in ("scenario", "arch"):
        assert isinstance(v, str), (k, v)
    else:
        assert isinstance(v, (int, float)) and not isinstance(v, bool), f"summary.{k} is {v!r}, not a number"
assert summary["sms"] == 8 and summary["cycles"] > 0 and summary["scoreboard_mismatches"] == 0, summary
assert s["interrupted"] is False and s["simulated_cycles"] >= summary["cycles"], s["simulated_cycles"]
assert s["tool"]["name"] == "tma-sim" and s["tool"]["version"], s["tool"]
c = s["config"]
# The scenario as it ran: the file's fields with the --set overrides applied.
sc = c["scenario"]
assert sc["file"].endswith("configs/scenarios/gemm_bf16.yaml"), sc["file"]
assert sc["overrides"] == ["sms=8", "workload.m=512", "workload.n=512", "workload.k=256"], sc["overrides"]
assert sc["resolved"]["sms"] == 8 and sc["resolved"]["workload"]["m"] == 512, sc["resolved"]
assert sc["resolved"]["name"] == "gemm_bf16" and sc["resolved"]["workload"]["kind"] == "gemm"
assert isinstance(sc["resolved"]["tensors"]["A"]["address"], int), sc["resolved"]["tensors"]["A"]
# The whole architecture after --arch-set, every section.
a = c["arch"]
assert a["name"] == "h100" and a["overrides"] == ["l2.hit_latency=301"], a
assert a["fields"]["l2"]["hit_latency"] == 301 and a["fields"]["sm_clock_mhz"] > 1000, a["fields"]["l2"]
for section in ("tma", "descriptor_cache", "smem", "l2", "dram", "cluster", "sim"):
    assert isinstance(a["fields"][section], dict) and a["fields"][section], section
assert c["options"]["scoreboard"] is True, c["options"]
# Module statistics stay objects of numbers.
assert all(isinstance(v, (int, float)) for v in s["gpu.l2"].values()), s["gpu.l2"]
EOF
    ;;
  *)
    fail "unknown mode '$what'"
    ;;
esac
echo "run outputs ($what): OK"
