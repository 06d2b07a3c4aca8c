#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages one job needs, when any is missing:
#   scripts/bootstrap.sh app    building and running gnio (the demo)
#   scripts/bootstrap.sh test   app, plus the test suite's libraries and the
#                               independent tools its tests compare against
# None of these packages starts a service or opens a port (the exposition of
# /metrics is checked with python3-prometheus-client's parser, not with a
# Prometheus server). apt's output goes to a log whose path the one-line
# summary names. CUDA is optional: nvcc at /usr/local/cuda (or on PATH) adds
# the GPU path.
set -euo pipefail
cd "$(dirname "$0")/.."
job=${1:-test}

app=(cmake ninja-build g++ pkg-config libpcap-dev libcli11-dev nlohmann-json3-dev libcu++-dev
     libcpp-httplib-dev)
# The AF_XDP and DPDK backends, the sanitizer and fuzzing builds (clang), the
# benchmarks, and the peers the tests check gnio against.
test=(libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
      libxdp-dev libbpf-dev dpdk-dev xdp-tools iproute2 ethtool
      tshark wireshark-common tcpdump dnsmasq-base bind9-dnsutils openssl iputils-ping arping curl tmux
      python3 python3-prometheus-client doxygen
      python3-dev pybind11-dev python3-numpy libdlpack-dev python3-pytest python3-dpkt
      pmacct nfdump libfixbuf-tools)
# Collectors whose packages ship init scripts and systemd units that their
# postinst would start: installed under a policy-rc.d that forbids starting
# anything (exit 101), then disabled, so that neither the install nor a boot
# starts them. The tests start them on loopback themselves.
services=(nfacctd pmacctd sfacctd uacctd nfdump)
case "$job" in
  app) packages=("${app[@]}") ;;
  test) packages=("${app[@]}" "${test[@]}") ;;
  *) echo "bootstrap: unknown job '$job': use app (build and run) or test (also the test suite)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

log=${GNIO_LOG_DIR:-$PWD/build-logs}/bootstrap-$job.log
mkdir -p "$(dirname "$log")"
echo "gnio: installing ${#missing[@]} Debian packages for '$job' (log: $log)"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  own_policy=1
fi
ok=1
{ $sudo apt-get update -qq && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1 || ok=""
[ -n "$own_policy" ] && $sudo rm -f "$policy"
if [ -z "$ok" ]; then
  tail -20 "$log" >&2
  echo "gnio: installing ${missing[*]} failed; the whole apt output is in $log" >&2
  exit 1
fi
for s in "${services[@]}"; do
  if [ -e "/etc/init.d/$s" ]; then
    $sudo update-rc.d "$s" disable >>"$log" 2>&1 || true
    command -v deb-systemd-helper >/dev/null && $sudo deb-systemd-helper disable "$s.service" >>"$log" 2>&1 || true
  fi
done
