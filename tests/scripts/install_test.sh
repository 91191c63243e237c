#!/usr/bin/env bash
# ctest install_consumer (docs/integration.md, "From install to a checked operation"):
#   1. `cmake --install` of the build tree into a temporary prefix: headers under include/tma/<concern>/,
#      the libraries, the CMake package and pkg-config files, tma-sim, share/tma/configs, LICENSE;
#   2. the installed tma-sim (--version, and a scenario run from an unrelated folder: the YAMLs are
#      found through <prefix>/share/tma);
#   3. the out-of-tree SystemC testbench of docs/integration.md (CMakeLists.txt, my_tb.cpp and the
#      commands, taken from the page) configured with find_package(TmaTlm 0.2), built and run;
#   4. the reference-engine snippet of the page's section 1, compiled with pkg-config tma-tlm-reference;
#   5. add_subdirectory of the sources with Boost forbidden: configures, and defines no test.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR [PYTHON]   (PYTHON: the interpreter the module is for)
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
python=${3:-}
doc=$src/docs/integration.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PREFIX=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }

# The fenced block that follows the line `<!-- install-test: NAME -->` in docs/integration.md.
block() { python3 "$src/tests/python/doc_blocks.py" "$doc" "$1"; }

echo "== 1. cmake --install into $PREFIX"
cmake --install "$build" --prefix "$PREFIX" >/dev/null
for f in include/tma/descriptor/tensor_map.h include/tma/reference/reference_engine.h \
         include/tma/gpu/gpu_system.h include/tma/config/paths.h include/tma/golden/golden_case.h \
         lib/libtma_descriptor.a lib/libtma_reference.a lib/libtma_gpu.a \
         lib/cmake/TmaTlm/TmaTlmConfig.cmake lib/cmake/TmaTlm/TmaTlmConfigVersion.cmake \
         lib/pkgconfig/tma-tlm.pc lib/pkgconfig/tma-tlm-reference.pc bin/tma-sim \
         share/tma/configs/arch/h200.yaml share/tma/configs/scenarios/gemm_bf16.yaml \
         share/tma/tests/golden/silicon/t0001.yaml share/doc/tma_tlm/LICENSE; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
[ ! -e "$PREFIX/include/tma/cli" ] || fail "the tool's own headers (tb/cli) are installed"

echo "== 2. the installed tma-sim"
version=$("$PREFIX/bin/tma-sim" --version)
echo "$version" | grep -q "$(sed -n 's/^project(tma_tlm VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ||
  fail "tma-sim --version says '$version'"
mkdir -p "$work/elsewhere"
(cd "$work/elsewhere" && env -u TMA_SHARE_DIR "$PREFIX/bin/tma-sim" run configs/scenarios/gemm_bf16.yaml \
   --quiet --set sms=1 --set workload.m=256 --set workload.n=256 >/dev/null) || fail "installed tma-sim run"
(cd "$work/elsewhere" && env -u TMA_SHARE_DIR "$PREFIX/bin/tma-sim" check "$PREFIX/share/tma/tests/golden/silicon_h100" | tail -1 |
   grep -qx "411 passed, 0 failed") || fail "installed tma-sim check <prefix>/share/tma/tests/golden/silicon_h100"
# TMA_SHARE_DIR overrides: pointed at an empty folder, the architecture is not found.
mkdir -p "$work/empty"
if (cd "$work/elsewhere" && TMA_SHARE_DIR=$work/empty "$PREFIX/bin/tma-sim" run configs/scenarios/gemm_bf16.yaml \
      --quiet --set sms=1 >/dev/null 2>&1); then
  fail "TMA_SHARE_DIR=<empty folder> still found configs/"
fi

echo "== 3. the SystemC testbench of docs/integration.md"
mkdir -p "$work/my_tb"
block CMakeLists.txt >"$work/my_tb/CMakeLists.txt"
block my_tb.cpp >"$work/my_tb/my_tb.cpp"
block commands >"$work/my_tb/commands.sh"
for f in CMakeLists.txt my_tb.cpp commands.sh; do
  [ -s "$work/my_tb/$f" ] || fail "docs/integration.md has no block <!-- install-test: ${f%.sh} -->"
done
out=$(cd "$work/my_tb" && CMAKE_BUILD_PARALLEL_LEVEL=2 bash -e commands.sh 2>&1) || { echo "$out"; fail "the testbench"; }
echo "$out" | grep -v '^--\|^\[' || true
echo "$out" | grep -qx "0 failed, invariants hold" || fail "the testbench did not print '0 failed, invariants hold'"
[ "$(echo "$out" | grep -c '^ok: ')" = 4 ] || fail "the testbench did not print four 'ok:' lines"

if [ -n "$python" ] && ls "$PREFIX"/lib/python3/dist-packages/tma*.so >/dev/null 2>&1; then
  echo "== 3b. the Python scoreboard of docs/integration.md, on the installed module and goldens"
  mkdir -p "$work/py"
  block scoreboard.py >"$work/py/scoreboard.py"
  block python-commands >"$work/py/commands.sh"
  # The page's `python3` is the interpreter the module was built for (Debian's, with NumPy).
  mkdir -p "$work/bin" && ln -s "$python" "$work/bin/python3"
  out=$(cd "$work/py" && PATH=$work/bin:$PATH bash -e commands.sh 2>&1) || { echo "$out" | tail; fail "the Python scoreboard"; }
  echo "$out" | tail -1
  echo "$out" | grep -qx "726 passed, 0 failed" || fail "the Python scoreboard did not print '726 passed, 0 failed'"
fi

echo "== 4. the reference-engine snippet (section 1), with pkg-config tma-tlm-reference"
snippet=$(block reference-snippet)
[ -n "$snippet" ] || fail "docs/integration.md has no block <!-- install-test: reference-snippet -->"
{
  echo "$snippet" | grep '^#include'
  echo "#include <cassert>"
  echo "using namespace std;"
  echo "int main() {"
  echo "$snippet" | grep -v '^#include'
  echo "  assert(r.outcome == tma::Outcome::ok && r.tx_bytes == 256);"
  echo "  return r.outcome == tma::Outcome::ok ? 0 : 1;"
  echo "}"
} >"$work/snippet.cpp"
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
g++ -std=c++17 -Wall -o "$work/snippet" "$work/snippet.cpp" $(pkg-config --cflags --libs tma-tlm-reference) ||
  fail "the section-1 snippet does not compile against the installed headers"
"$work/snippet" || fail "the section-1 snippet"

echo "== 5. add_subdirectory: no Boost, no tests"
mkdir -p "$work/host"
cat >"$work/host/CMakeLists.txt" <<HOST
cmake_minimum_required(VERSION 3.16)
project(host CXX)
add_subdirectory("$src" tma_tlm EXCLUDE_FROM_ALL)
if(NOT TARGET tma_reference OR NOT TARGET tma_model)
  message(FATAL_ERROR "no tma_reference / tma_model")
endif()
HOST
cmake -S "$work/host" -B "$work/host/build" --no-warn-unused-cli -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON >/dev/null ||
  fail "add_subdirectory needs Boost"
! grep -q "add_test\|test_integration_example" "$work/host/build/tma_tlm/CTestTestfile.cmake" 2>/dev/null &&
  [ ! -d "$work/host/build/tma_tlm/tests" ] || fail "add_subdirectory brings in the tests"
echo "install_consumer: OK"
