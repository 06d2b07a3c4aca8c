#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and running need (scripts/bootstrap.sh app: no test
# tools, no service), builds the application alone, and runs the reference
# application, `gnio run packet-processing`, on a bundled capture of real DNS
# traffic: on the first CUDA GPU if there is one, otherwise on the emulated
# device (it says so in one line). Replies go to build-app/replies.pcap, the
# full report to build-app/report.json. Extra arguments go to the
# application.
set -euo pipefail
cd "$(dirname "$0")/.."
GNIO_BOOTSTRAP=app scripts/build.sh app --target gnio_cli
echo "gnio: running gnio run packet-processing on data/captures/dns.pcap"
exec build-app/apps/gnio/gnio run packet-processing --gpu auto --rx pcap:data/captures/dns.pcap \
  --tx pcap-out:build-app/replies.pcap --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01 \
  --print dns,http,tls --json build-app/report.json "$@"
