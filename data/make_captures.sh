#!/usr/bin/env bash
# Recreates data/captures/*.pcap: real traffic of real programs between two
# network namespaces joined by a veth pair, captured on the server's end.
# Needs root and: tcpdump iproute2 ethtool curl python3 dnsmasq-base
# bind9-dnsutils (dig) openssl iputils-ping arping.
#
#   client gnio-cli  veth 02:00:00:00:00:02  10.77.0.2/24  fd77::2/64
#   server gnio-srv  veth 02:00:00:00:00:01  10.77.0.1/24  fd77::1/64
#
# Every capture but http.pcap is made with transmit checksum offload off, so
# that its TCP/UDP checksums are complete; http.pcap keeps it on, so that its
# client-sent segments hold only the pseudo-header sum (the "partial" state).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/captures}
mkdir -p "$out"
work=$(mktemp -d)
cli=gnio-cli srv=gnio-srv

# Ends every process still running in our namespaces, then the namespaces.
stop_namespaces() {
  for ns in "$cli" "$srv"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
  done
  sleep 0.2
  ip netns del "$cli" 2>/dev/null || true
  ip netns del "$srv" 2>/dev/null || true
}

cleanup() {
  stop_namespaces
  rm -rf "$work"
}
trap cleanup EXIT

C() { ip netns exec "$cli" "$@"; }
S() { ip netns exec "$srv" "$@"; }

# Fresh namespaces and a veth pair; $1: on|off for transmit checksum offload.
setup() {
  stop_namespaces
  ip netns add "$cli"
  ip netns add "$srv"
  ip link add veth-c netns "$cli" address 02:00:00:00:00:02 type veth peer veth-s netns "$srv" address 02:00:00:00:00:01
  for ns in "$cli" "$srv"; do
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
      net.ipv6.conf.default.router_solicitations=0
  done
  C ip addr add 10.77.0.2/24 dev veth-c
  S ip addr add 10.77.0.1/24 dev veth-s
  C ip addr add fd77::2/64 dev veth-c nodad
  S ip addr add fd77::1/64 dev veth-s nodad
  C ip link set veth-c up
  S ip link set veth-s up
  C ethtool -K veth-c tx "$1" >/dev/null
  S ethtool -K veth-s tx "$1" >/dev/null
}

# Waits until something in namespace $1 listens on TCP port $2.
wait_port() {
  for _ in $(seq 50); do
    ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
    sleep 0.1
  done
  echo "make_captures: nothing listens on port $2 in $1 after 5 s" >&2
  return 1
}

# Captures on the server's veth into $out/$1 while the rest of the arguments run.
capture() {
  local file=$out/$1
  shift
  ip netns exec "$srv" tcpdump -i veth-s -U -n -w "$file" 2>"$work/tcpdump.log" &
  local dump=$!
  # Start the traffic only once tcpdump listens (it may be slow on a busy host).
  for _ in $(seq 100); do
    grep -q "listening on" "$work/tcpdump.log" 2>/dev/null && break
    sleep 0.1
  done
  sleep 0.2
  "$@"
  sleep 0.5
  kill -TERM "$dump"
  wait "$dump" || true
  echo "make_captures: $(basename "$file"): $(tcpdump -r "$file" 2>/dev/null | wc -l) frames"
}

http_traffic() {
  mkdir -p "$work/www/docs"
  echo "hello from gnio" >"$work/www/index.html"
  echo "second page" >"$work/www/docs/page.txt"
  (cd "$work/www" && S python3 -m http.server 80 --bind 10.77.0.1 >/dev/null 2>&1) &
  (cd "$work/www" && S python3 -m http.server 8000 --bind fd77::1 >/dev/null 2>&1) &
  wait_port "$srv" 80
  wait_port "$srv" 8000
  C curl -s -o /dev/null --retry 3 --retry-connrefused http://10.77.0.1/
  C curl -s -o /dev/null --retry 3 --retry-connrefused -H 'Host: www.gnio.test' 'http://10.77.0.1/docs/page.txt?lang=en'
  C curl -s -o /dev/null --retry 3 --retry-connrefused -I http://10.77.0.1/index.html
  C curl -s -o /dev/null --retry 3 --retry-connrefused -X POST -d 'a=1&b=2' http://10.77.0.1/form
  C curl -s -o /dev/null --retry 3 --retry-connrefused 'http://[fd77::1]:8000/docs/page.txt'
  C curl -s -o /dev/null --retry 3 --retry-connrefused -X OPTIONS 'http://[fd77::1]:8000/'
}

dns_traffic() {
  S dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces --listen-address=10.77.0.1 \
    --listen-address=fd77::1 --port 53 --user=root \
    --address=/www.gnio.test/10.77.0.80 --address=/www.gnio.test/fd77::80 \
    --mx-host=gnio.test,mail.gnio.test,10 --txt-record=gnio.test,"v=gnio" \
    --local=/gnio.test/ >/dev/null 2>&1 &
  wait_port "$srv" 53
  C dig +short +tries=3 +time=1 @10.77.0.1 www.gnio.test A >/dev/null
  C dig +short +tries=3 +time=1 @10.77.0.1 www.gnio.test AAAA >/dev/null
  C dig +short +tries=3 +time=1 @10.77.0.1 gnio.test MX >/dev/null
  C dig +short +tries=3 +time=1 @10.77.0.1 gnio.test TXT >/dev/null
  C dig +short +tries=3 +time=1 @10.77.0.1 missing.gnio.test A >/dev/null || true
  C dig +short +tries=3 +time=1 @fd77::1 www.gnio.test AAAA >/dev/null
  C dig +short +tries=3 +time=1 +tcp @10.77.0.1 www.gnio.test A >/dev/null
}

ping_traffic() {
  C ping -c 4 -i 0.2 -q 10.77.0.1 >/dev/null
  C ping -c 2 -i 0.2 -s 1200 -q 10.77.0.1 >/dev/null
  C ping -6 -c 4 -i 0.2 -q fd77::1 >/dev/null
}

arp_traffic() {
  C arping -c 3 -w 3 -I veth-c 10.77.0.1 >/dev/null
  C ip neigh flush dev veth-c
  C ip -6 neigh flush dev veth-c
  C ping -6 -c 1 -q fd77::1 >/dev/null
}

tls_traffic() {
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 1 \
    -subj /CN=tls.gnio.test 2>/dev/null
  # s_server stops at the end of its stdin: keep it open for the run.
  sleep 30 | S openssl s_server -quiet -accept 443 -cert "$work/cert.pem" -key "$work/key.pem" -www >/dev/null 2>&1 &
  wait_port "$srv" 443
  for name in tls.gnio.test api.gnio.test; do
    C openssl s_client -connect 10.77.0.1:443 -servername "$name" -brief </dev/null >/dev/null 2>&1 || true
  done
  C openssl s_client -connect '[fd77::1]:443' -servername v6.gnio.test -brief </dev/null >/dev/null 2>&1 || true
}

# 802.1Q (id 100) and QinQ (802.1ad 200, then 802.1Q 300) over the same veth.
vlan_traffic() {
  C ip link add link veth-c name veth-c.100 type vlan id 100
  S ip link add link veth-s name veth-s.100 type vlan id 100
  C ip link add link veth-c name veth-c.200 type vlan proto 802.1ad id 200
  S ip link add link veth-s name veth-s.200 type vlan proto 802.1ad id 200
  C ip link add link veth-c.200 name veth-c.300 type vlan id 300
  S ip link add link veth-s.200 name veth-s.300 type vlan id 300
  C ip addr add 10.78.0.2/24 dev veth-c.100
  S ip addr add 10.78.0.1/24 dev veth-s.100
  C ip addr add 10.79.0.2/24 dev veth-c.300
  S ip addr add 10.79.0.1/24 dev veth-s.300
  for l in veth-c.100 veth-c.200 veth-c.300; do C ip link set "$l" up; done
  for l in veth-s.100 veth-s.200 veth-s.300; do S ip link set "$l" up; done
  S python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 7))
s.settimeout(3)
try:
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(d, a)
except socket.timeout:
    pass' &
  sleep 0.5
  C ping -c 3 -i 0.2 -q 10.78.0.1 >/dev/null
  C ping -c 3 -i 0.2 -q 10.79.0.1 >/dev/null
  C python3 -c '
import socket
for dst in ("10.78.0.1", "10.79.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.sendto(b"gnio udp echo over vlan", (dst, 7))
    s.recvfrom(2048)'
}

setup off; capture dns.pcap dns_traffic
setup off; capture ping.pcap ping_traffic
setup off; capture arp.pcap arp_traffic
setup off; capture tls.pcap tls_traffic
# A kernel without 802.1Q support (no 8021q) cannot make the VLAN capture:
# then vlan.pcap is ping.pcap and dns.pcap re-tagged (make_app_adversarial.py).
setup off
if C ip link add link veth-c name probe.9 type vlan id 9 2>/dev/null; then
  C ip link del probe.9
  capture vlan.pcap vlan_traffic
else
  echo "make_captures: this kernel has no 802.1Q devices; vlan.pcap is made by re-tagging real frames" >&2
  rm -f "$out/vlan.pcap"
fi
setup on;  capture http.pcap http_traffic

vlan_from=()
[ -f "$out/vlan.pcap" ] || vlan_from=(--vlan-from "$out/ping.pcap" "$out/dns.pcap")
python3 "$here/make_app_adversarial.py" --out "$out" "${vlan_from[@]}"
