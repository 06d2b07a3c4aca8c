#!/usr/bin/env bash
# Installs what is missing, builds, and runs the reference application,
# `gnio run packet-processing`, on a bundled capture of real DNS traffic: on
# the first CUDA GPU if there is one, otherwise on the emulated device (it
# says so in one line). Replies go to build/replies.pcap, the full report to
# build/report.json. Extra arguments go to the application.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default --target gnio_cli  # the application alone, not the tests
exec build/apps/gnio/gnio run packet-processing --gpu auto --rx pcap:data/captures/dns.pcap \
  --tx pcap-out:build/replies.pcap --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01 \
  --print dns,http,tls --json build/report.json "$@"
