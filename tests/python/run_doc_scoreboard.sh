#!/usr/bin/env bash
# ctest python_scoreboard_goldens: the scoreboard loop of docs/integration.md ("Python"), taken from
# the page, run over the golden folders given by the Python the module was built for.
# Usage: run_doc_scoreboard.sh PYTHON SOURCE_DIR GOLDEN_DIR...
set -euo pipefail
python=$1 src=$2; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/tests/python/doc_blocks.py" "$src/docs/integration.md" scoreboard.py >"$work/scoreboard.py"
"$python" "$work/scoreboard.py" "$@"
