#!/usr/bin/env bash
# Copies the build dependencies a GPU machine without a package manager
# lacks (CLI11, nlohmann-json, GoogleTest, libpcap and its shared-library
# closure) from this Debian machine into .deps/, a prefix that
# scripts/device-run.sh passes to CMake. .deps/ is ignored by git.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.deps
multiarch=lib/x86_64-linux-gnu
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/$multiarch" "$dest/share/cmake"

cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/gtest /usr/include/gmock /usr/include/pcap "$dest/include/"
cp /usr/include/pcap.h "$dest/include/"
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$dest/share/cmake/"
mkdir -p "$dest/$multiarch/cmake"
cp -r /usr/$multiarch/cmake/GTest "$dest/$multiarch/cmake/"
cp /usr/$multiarch/libgtest*.a /usr/$multiarch/libgmock*.a "$dest/$multiarch/"

# libpcap and every library it needs except the C library itself.
pcap=$(readlink -f /usr/$multiarch/libpcap.so.0.8)
cp "$pcap" "$dest/$multiarch/"
ln -sf "$(basename "$pcap")" "$dest/$multiarch/libpcap.so.0.8"
ln -sf libpcap.so.0.8 "$dest/$multiarch/libpcap.so"
ldd "$pcap" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
  case "$soname" in libc.so.*|ld-linux*|linux-vdso*) continue ;; esac
  cp "$(readlink -f "$path")" "$dest/$multiarch/$soname"
done
# A relocatable libpcap.pc: pkg-config consumers of gnio.pc need it.
mkdir -p "$dest/$multiarch/pkgconfig"
cat >"$dest/$multiarch/pkgconfig/libpcap.pc" <<PC
prefix=\${pcfiledir}/../../..
libdir=\${prefix}/$multiarch
includedir=\${prefix}/include

Name: libpcap
Description: Platform-independent network traffic capture library
Version: $(pkg-config --modversion libpcap)
Libs: -L\${libdir} -lpcap
Cflags: -I\${includedir}
PC
du -sh "$dest"
