#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ping from a peer namespace answered by the persistent kernel of
# `gnio run packet-processing --rx afxdp:gp0 --tx afxdp:gp0` (skb or drv mode),
# then the interface carries no XDP program. Namespaces are removed on
# every path (trap). Exit 77 (skipped) without iproute2 or ping.
# usage: pp_ping.sh GNIO_BINARY MODE
set -u
gnio=$1
mode=$2
command -v ip >/dev/null && command -v ping >/dev/null || { echo "SKIP: needs ip and ping"; exit 77; }
dut=gnio-pp-dut-$$
peer=gnio-pp-peer-$$
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  ip netns del "$dut" 2>/dev/null
  ip netns del "$peer" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$dut" && ip netns add "$peer" || { echo "SKIP: the kernel refuses network namespaces"; exit 77; }
set -e
ip -n "$dut" link add gp0 type veth peer name gp1 netns "$peer"
ip -n "$dut" link set gp0 up
ip -n "$peer" link set gp1 up
ip -n "$peer" addr add 10.78.0.2/24 dev gp1
# Whole checksums on the wire, as from a NIC (veth would leave them partial).
ip netns exec "$peer" ethtool -K gp1 tx off >/dev/null 2>&1 || true
mac=$(ip -n "$dut" -o link show gp0 | sed 's/.*link\/ether \([^ ]*\).*/\1/')
set +e
ip netns exec "$dut" "$gnio" run packet-processing --rx "afxdp:gp0,mode=$mode" --tx "afxdp:gp0,mode=$mode" \
  --gpu "${GNIO_TEST_GPU:-cpu}" --ip 10.78.0.1 --mac "$mac" --duration 8 --quiet > "pp-ping-$mode.log" 2>&1 &
pid=$!
# Wait until gnio has attached its program.
for _ in $(seq 50); do
  ip -n "$dut" link show gp0 | grep -q "prog/xdp" && break
  sleep 0.1
done
out=$(ip netns exec "$peer" ping -c 20 -i 0.1 -W 2 10.78.0.1)
echo "$out" | tail -2
wait "$pid"
echo "gnio exit status $?; its log:"
cat "pp-ping-$mode.log"
pid=""
rc=0
echo "$out" | grep -q " 20 received" || { echo "FAIL: not every ping got its reply"; rc=1; }
if ip -n "$dut" link show gp0 | grep -q "prog/xdp"; then
  echo "FAIL: an XDP program stayed attached to gp0 after gnio ended"; rc=1
fi
exit $rc
