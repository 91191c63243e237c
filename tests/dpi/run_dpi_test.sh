#!/usr/bin/env bash
# ctest dpi_verilator: the SystemVerilog testbench of docs/integration.md ("SystemVerilog: DPI-C"),
# taken from the page with its commands, built by Verilator against an installed copy (cmake
# --install into a temporary prefix) and run over a sample of the silicon goldens.
# Usage: run_dpi_test.sh BUILD_DIR SOURCE_DIR. Exit 77 (skipped) without verilator.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
command -v verilator >/dev/null || { echo "verilator is not installed (scripts/setup.sh installs it)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PREFIX=$work/prefix
cmake --install "$build" --prefix "$PREFIX" >/dev/null
blocks=$src/tests/python/doc_blocks.py
python3 "$blocks" "$src/docs/integration.md" tb.sv >"$work/tb.sv"
python3 "$blocks" "$src/docs/integration.md" sv-commands >"$work/commands.sh"
out=$(cd "$work" && bash -e commands.sh 2>&1) || { echo "$out" | tail -40; exit 1; }
echo "$out" | grep -v '^- \|^make\|^g++\|^ccache\|^echo\|^ar \|^rm \|^%' | tail -15
last=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
[ -n "$last" ] || { echo "FAIL: no 'N passed, M failed' line"; exit 1; }
passed=${last%% passed*}
failed=$(echo "$last" | sed 's/.* \([0-9]*\) failed/\1/')
[ "$failed" = 0 ] && [ "$passed" -ge 60 ] || { echo "FAIL: $last"; exit 1; }
echo "dpi_verilator: OK"
