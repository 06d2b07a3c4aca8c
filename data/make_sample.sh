#!/usr/bin/env bash
# Recreates data/sample.pcap: a real capture of the loopback interface of a
# private network namespace (so nothing but this traffic is on it), with the
# MTU lowered to 1500 and segmentation offload off so frames look like a
# normal Ethernet wire. Needs root, tcpdump, iputils-ping, ethtool, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/sample.pcap}
exec unshare --net bash -euo pipefail -c '
  here=$1 out=$2
  ip link set lo up
  ip link set lo mtu 1500
  ethtool -K lo tso off gso off >/dev/null
  tcpdump -i lo -U -Z root --time-stamp-precision=nano -w "$out" 2>/dev/null &
  dump=$!
  sleep 1
  ping -c 12 -i 0.05 -q 127.0.0.1 >/dev/null
  ping -c 4 -i 0.05 -s 1000 -q 127.0.0.1 >/dev/null
  ping -6 -c 12 -i 0.05 -q ::1 >/dev/null
  ping -6 -c 4 -i 0.05 -s 1000 -q ::1 >/dev/null
  python3 "$here/make_traffic.py"
  sleep 1
  kill -INT "$dump"
  wait "$dump" || true
' make_sample "$here" "$out"
