#!/usr/bin/env bash
# Configures and builds gnio with a CMake preset (default: "default"); more
# arguments go to the build (e.g. --target gnio_cli).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
shift || true
export PATH=/usr/local/cuda/bin:$PATH
scripts/bootstrap.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" "$@"
