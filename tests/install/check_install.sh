#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build tree into a temporary prefix, then builds and runs a
# program against it twice: with find_package(gnio) and with pkg-config.
# The prefixes the build searched (its CMAKE_PREFIX_PATH, optional second
# argument) are searched again: gnio's dependencies may live there.
set -euo pipefail
build_dir=$1
IFS=';' read -r -a dep_prefixes <<<"${2:-}"
src_dir=$(cd "$(dirname "$0")" && pwd)/consumer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$src_dir" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix${2:+;$2}" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer" | grep -x "opened cpu and synthetic (max burst 256)"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
for p in "${dep_prefixes[@]}"; do PKG_CONFIG_PATH+=":$p/lib/pkgconfig:$p/lib/$(uname -m)-linux-gnu/pkgconfig"; done
export PKG_CONFIG_PATH
c++ -std=c++20 "$src_dir/main.cpp" $(pkg-config --cflags --libs gnio) -o "$work/pc"
"$work/pc" | grep -x "opened cpu and synthetic (max burst 256)"
