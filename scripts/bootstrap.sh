#!/usr/bin/env bash
# Installs the Debian 12 packages gnio builds with, when any is missing.
# CUDA is optional: nvcc at /usr/local/cuda (or on PATH) adds the GPU path.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libpcap-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev libcu++-dev iproute2
          libcpp-httplib-dev clang libclang-rt-14-dev curl prometheus tmux
          libxdp-dev libbpf-dev dpdk-dev xdp-tools
          tshark tcpdump ethtool dnsmasq-base bind9-dnsutils openssl iputils-ping arping)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "bootstrap: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
