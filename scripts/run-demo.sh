#!/usr/bin/env bash
# Installs what is missing, builds, and runs the reference application on the
# bundled capture: on the first CUDA GPU if there is one, otherwise on the
# emulated device. Echo replies are written to build/replies.pcap.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
build/apps/gnio/gnio doctor || true
exec build/examples/packet_processing --gpu auto --nic pcap:data/sample.pcap \
  --reply-out pcap-out:build/replies.pcap --verify "$@"
