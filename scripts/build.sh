#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds gnio with a CMake preset (default: "default"); more
# arguments go to the build (e.g. --target gnio_cli). GNIO_BOOTSTRAP names
# the packages to install first: app (build and run, the default) or test.
# Prints one line per step; the configure and build output goes to
# build-logs/, named on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
shift || true
export PATH=/usr/local/cuda/bin:$PATH
scripts/bootstrap.sh "${GNIO_BOOTSTRAP:-app}"
logs=${GNIO_LOG_DIR:-$PWD/build-logs}
mkdir -p "$logs"
step() {  # step NAME LOG COMMAND...: runs it quietly, shows the log's tail if it fails
  local name=$1 log=$2
  shift 2
  echo "gnio: $name (log: $log)"
  if ! "$@" >"$log" 2>&1; then
    if [ -n "${CI:-}" ]; then cat "$log" >&2; else tail -30 "$log" >&2; fi
    echo "gnio: $name failed; the whole output is in $log" >&2
    return 1
  fi
}
step "configuring preset $preset" "$logs/configure-$preset.log" cmake --preset "$preset"
step "building preset $preset${*:+ ($*)}" "$logs/build-$preset.log" cmake --build --preset "$preset" "$@"
