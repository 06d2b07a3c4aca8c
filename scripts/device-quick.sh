#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shortest GPU check: build the runtime tests and the examples, run the
# gpu label. For a device call with little time left; logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/.deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake -S . -B build-dev -G Ninja -DCMAKE_PREFIX_PATH="$PWD/.deps" -DGNIO_BUILD_BENCH=OFF >"$OUT/configure.log" 2>&1 || exit 1
cmake --build build-dev -j"$(nproc)" --target test_lifecycle test_datapath simple_receive echo packet_processing \
  >"$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok"
timeout 150 ctest --test-dir build-dev -L gpu -j4 --timeout 120 --output-on-failure >"$OUT/ctest-gpu.log" 2>&1
grep -E "tests passed|tests failed|\(Failed\)|Timeout|^\[  FAILED|MISMATCH" "$OUT/ctest-gpu.log" | tail -20
