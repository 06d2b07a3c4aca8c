#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a
# program against it twice: with find_package(gnio) and with pkg-config.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)/consumer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$src_dir" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer" | grep -x "opened cpu and synthetic (max burst 256)"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
c++ -std=c++20 "$src_dir/main.cpp" $(pkg-config --cflags --libs gnio) -o "$work/pc"
"$work/pc" | grep -x "opened cpu and synthetic (max burst 256)"
