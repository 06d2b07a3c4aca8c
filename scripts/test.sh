#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing (the test job: scripts/bootstrap.sh test), builds,
# and runs the whole test suite. Tests labelled gpu report "Skipped" on
# machines without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${GNIO_PRESET:-ci}
GNIO_BOOTSTRAP=test scripts/build.sh "$preset"
ctest --preset "$preset"
