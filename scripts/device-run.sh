#!/usr/bin/env bash
# One call on a GPU machine: build with the same CMake, run the gpu- and
# cpu-label suites, compute-sanitizer on the GPU end-to-end runs, the tools'
# views of the device and the benchmark. Logs go to $OUT (default
# ./device-out). Dependencies a bare machine lacks come from .deps/
# (scripts/stage-device-deps.sh). `soak` (not part of `all`) runs the
# 300 s soak on its own.
#   scripts/device-run.sh [all|test|bench|soak]
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
if [ -d .deps ]; then
  export LD_LIBRARY_PATH=$PWD/.deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps")
fi
jobs=$(nproc)

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; nvcc --version | tail -2; cmake --version | head -1; } 2>&1 | tee "$OUT/machine.txt"

cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${prefix[@]}" >"$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-dev -j"$jobs" >"$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "build ok"

if [ "$what" = all ] || [ "$what" = test ]; then
  timeout 300 ctest --test-dir build-dev -L gpu -j4 --timeout 240 --output-on-failure >"$OUT/ctest-gpu.log" 2>&1
  grep -E "tests passed|tests failed|Failed|\(Failed\)|Timeout|\(Skipped\)" "$OUT/ctest-gpu.log" | tail -25
  timeout 120 ctest --test-dir build-dev -L cpu -j"$jobs" --timeout 100 --output-on-failure >"$OUT/ctest-cpu.log" 2>&1
  grep -E "tests passed|tests failed|\(Failed\)" "$OUT/ctest-cpu.log" | tail -10
  sample="pcap:$PWD/data/sample.pcap"
  {
    for mem in gpu host; do
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-dev/examples/echo --timeout 60 --gpu auto --require-gpu \
        --mode pcap --mem $mem --in "$sample" --out pcap-out:/tmp/san-echo-$mem.pcap --verify
      echo "memcheck echo mem=$mem rc=$?"
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-dev/examples/simple_receive --timeout 60 --gpu auto \
        --require-gpu --mem $mem --scope warp --nic "$sample" --verify
      echo "memcheck simple_receive mem=$mem rc=$?"
    done
  } >"$OUT/sanitizer.log" 2>&1
  grep -E "ERROR SUMMARY|rc=" "$OUT/sanitizer.log"
  build-dev/apps/gnio/gnio doctor --json >"$OUT/doctor.json" 2>&1; echo "gnio doctor rc=$?"
  build-dev/apps/gnio/gnio doctor >"$OUT/doctor.txt" 2>&1
  build-dev/apps/gnio/gnio caps --gpu auto --json >"$OUT/caps.json" 2>&1; echo "gnio caps rc=$?"
  build-dev/apps/gnio/gnio caps --gpu auto --nic "$sample" >"$OUT/caps.txt" 2>&1
fi

if [ "$what" = all ] || [ "$what" = bench ]; then
  # One table (docs/BENCHMARKS.md): floors, ceilings, gnio rows, anti-patterns, TX, echo, targets.
  timeout 280 build-dev/bench/gnio_bench --gpu auto --samples 3000 >"$OUT/bench.txt" 2>&1
  echo "bench rc=$?"
  grep -E "^machine:|\| NO \|" "$OUT/bench.txt"
  sed -n '/^| target |/,$p' "$OUT/bench.txt"
  # The reference application against receive-only and one host core (docs/BENCHMARKS.md).
  timeout 240 build-dev/bench/app_bench --gpu auto --row-limit 60 >"$OUT/app-bench.txt" 2>&1
  echo "app_bench rc=$?"
  grep -E "^(machine|setup):|^error:|\| NO \|$" "$OUT/app-bench.txt"
  sed -n '/^| traffic | variant |/,/^$/p' "$OUT/app-bench.txt"
fi

if [ "$what" = soak ]; then
  # 300 s at full load, counters checked every second (docs/BENCHMARKS.md "Soak").
  timeout 420 build-dev/bench/soak --gpu auto --duration 300 >"$OUT/soak.txt" 2>&1
  echo "soak rc=$?"
  grep -E "^(soak:|warm-up|t=|end after|check |verdict|violation)" "$OUT/soak.txt" | tail -50
fi
