#!/usr/bin/env bash
# Installs what the project needs on Debian bookworm (apt-get, as root) when it is missing, then
# configures and builds everything into build/. Safe to run again: it only does what is left.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(build-essential cmake pkg-config libsystemc-dev libyaml-cpp-dev libboost-test-dev
          python3 python3-yaml python3-matplotlib python3-scipy gtkwave   # gtkwave: vcd2fst/fst2vcd (run_outputs_vcd); scipy: scripts/lofo_fit.py
          python3-dev pybind11-dev python3-pybind11 python3-numpy verilator)  # tb/bindings: Python module, DPI-C test
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: these packages are missing; run as root to install them: ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)"
