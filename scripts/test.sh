#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Tests
# labelled gpu report "Skipped" on machines without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${GNIO_PRESET:-ci}
scripts/build.sh "$preset"
ctest --preset "$preset"
