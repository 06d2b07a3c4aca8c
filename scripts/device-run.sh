#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One call on a GPU machine: the gpu-label suite, compute-sanitizer on the GPU
# end-to-end runs, the tools' views of the device, the benchmarks and the
# soak. Logs go to $OUT (default ./device-out).
#   scripts/device-run.sh STEP...
#     test      ctest -L gpu, compute-sanitizer, gnio doctor/caps
#     bench     gnio (gnio_bench, docs/BENCHMARKS.md, and the echo loops)
#               and app (app_bench)
#     nic       gnio_nic_bench on a veth pair (needs root)
#     soak      300 s at full load with per-second counter checks; with
#               other steps it runs beside test (correctness only) and the
#               timed steps wait for it to end
#     all       test bench
# Environment:
#   GNIO_BUILD=DIR  a build made elsewhere at the same absolute paths (the
#                   machine then needs no compiler); default: build here
#   GNIO_DEPS=DIR   prefix of what a bare machine lacks (default ./.deps,
#                   scripts/stage-device-deps.sh)
#   GNIO_QUICK=1    short benchmark runs
#   GNIO_CTEST_ARGS more ctest options for the gpu label (e.g. -E dpdk)
#   GNIO_BENCH_ARGS more gnio_bench options (e.g. --ring 16384 --strides 32768)
#   GNIO_APP_BENCH_ARGS more app_bench options (e.g. --burst 2048)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
steps=" $* "
[ "$steps" = "  " ] && steps=" all "
[[ $steps == *" all "* ]] && steps+=" test bench "
[[ $steps == *" bench "* ]] && steps+=" gnio app "
has() { [[ $steps == *" $1 "* ]]; }

deps=${GNIO_DEPS:-$PWD/.deps}
prefix=()
if [ -d "$deps" ]; then
  export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export LIBXDP_OBJECT_PATH=$deps/lib/x86_64-linux-gnu/bpf
  prefix=(-DCMAKE_PREFIX_PATH="$deps")
fi
# tshark's answers recorded where it is installed (the app tests' oracle).
if ! command -v tshark >/dev/null && [ -d "$deps/tshark-answers" ]; then
  export GNIO_TSHARK_ANSWERS=$deps/tshark-answers
fi
quick=()
[ "${GNIO_QUICK:-0}" = 1 ] && quick=(--quick)

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  nvcc --version | tail -2; uname -r; nproc; } 2>&1 | tee "$OUT/machine.txt"

if [ -n "${GNIO_BUILD:-}" ]; then
  b=$GNIO_BUILD
  echo "using the build in $b"
else
  b=build-dev
  cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${prefix[@]}" >"$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; exit 1; }
  cmake --build "$b" -j"$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -60; exit 1; }
  echo "build ok"
fi

soak_pid=
if has soak; then
  # Counters checked every second for 300 s (docs/BENCHMARKS.md "Soak").
  timeout 420 "$b/bench/soak" --gpu auto --duration 300 >"$OUT/soak.txt" 2>&1 &
  soak_pid=$!
fi
finish_soak() {
  [ -n "$soak_pid" ] || return 0
  wait "$soak_pid"
  echo "soak rc=$?"
  grep -E "^(soak:|warm-up|end after|check |verdict|violation)" "$OUT/soak.txt" | tail -30
  soak_pid=
}

if has test; then
  # One test at a time: persistent kernels of several processes time-slice
  # the GPU, and each test then waits out the others' slices (test_datapath:
  # 1.8 s alone, 80-90 s beside three others). GNIO_CTEST_ARGS adds ctest
  # options (e.g. -E dpdk where the machine has no DPDK libraries).
  timeout 300 ctest --test-dir "$b" -L gpu -j1 --timeout 240 --output-on-failure ${GNIO_CTEST_ARGS:-} \
    >"$OUT/ctest-gpu.log" 2>&1
  grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)" "$OUT/ctest-gpu.log" | tail -25
  sample="pcap:$PWD/data/sample.pcap"
  {
    for mem in gpu host; do
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$b/examples/echo" --timeout 60 --gpu auto --require-gpu \
        --mode pcap --mem $mem --in "$sample" --out pcap-out:/tmp/san-echo-$mem.pcap --verify
      echo "memcheck echo mem=$mem rc=$?"
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$b/examples/simple_receive" --timeout 60 --gpu auto \
        --require-gpu --mem $mem --scope warp --nic "$sample" --verify
      echo "memcheck simple_receive mem=$mem rc=$?"
    done
  } >"$OUT/sanitizer.log" 2>&1
  grep -E "ERROR SUMMARY|rc=" "$OUT/sanitizer.log"
  "$b/apps/gnio/gnio" doctor --json >"$OUT/doctor.json" 2>&1; echo "gnio doctor rc=$?"
  "$b/apps/gnio/gnio" doctor >"$OUT/doctor.txt" 2>&1
  "$b/apps/gnio/gnio" caps --gpu auto --json >"$OUT/caps.json" 2>&1; echo "gnio caps rc=$?"
  "$b/apps/gnio/gnio" caps --gpu auto --nic "$sample" >"$OUT/caps.txt" 2>&1
fi

# Timed steps run alone on the machine.
finish_soak
if has gnio; then
  # One table: floors, ceilings, gnio rows, anti-patterns, TX, echo, targets.
  timeout 200 "$b/bench/gnio_bench" --gpu auto "${quick[@]}" ${GNIO_BENCH_ARGS:-} >"$OUT/bench.txt" 2>&1
  echo "bench rc=$?"
  grep -E "^machine:|\| NO \|" "$OUT/bench.txt"
  sed -n '/^| target |/,$p' "$OUT/bench.txt"
  # TX from device memory against host memory: the echo loop, timed whole.
  for mem in host gpu; do
    t0=$(date +%s.%N)
    timeout 120 "$b/examples/echo" --gpu auto --require-gpu --mode loop --mem $mem \
      --source synthetic:count=100000,size=96-1500,proto=mix,ipv6=mix,seed=3 >>"$OUT/echo-loop.txt" 2>&1
    rc=$?
    echo "echo loop, 100000 packets, mem=$mem: rc=$rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s"
  done
fi
if has app; then
  # The reference application against receive-only and one host core.
  timeout 300 "$b/bench/app_bench" --gpu auto --row-limit 30 "${quick[@]}" ${GNIO_APP_BENCH_ARGS:-} >"$OUT/app-bench.txt" 2>&1
  echo "app_bench rc=$?"
  grep -E "packets finished|^(machine|setup):|^error:|\| NO \|$" "$OUT/app-bench.txt"
  sed -n '/^| traffic | variant |/,/^$/p' "$OUT/app-bench.txt"
fi
if has nic; then
  timeout 150 "$b/bench/gnio_nic_bench" --gpu auto "${quick[@]}" --json "$OUT/nic-bench.json" >"$OUT/nic-bench.txt" 2>&1
  echo "nic_bench rc=$?"
  grep -E "^(machine|veth pair)|^\|" "$OUT/nic-bench.txt"
fi
