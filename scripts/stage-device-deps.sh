#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
# libxdp and libbpf (the afxdp backend): headers, libraries with their
# closure, relocatable .pc files, and the BPF objects libxdp loads
# (LIBXDP_OBJECT_PATH points there). Google Benchmark and cpp-httplib too.
# httplib.h includes brotli's headers: Debian builds it with CPPHTTPLIB_BROTLI_SUPPORT.
cp -r /usr/include/xdp /usr/include/bpf /usr/include/benchmark /usr/include/httplib.h /usr/include/brotli "$dest/include/"
for lib in libxdp.so.1 libbpf.so.1; do
  real=$(readlink -f /usr/$multiarch/$lib)
  cp "$real" "$dest/$multiarch/"
  ln -sf "$(basename "$real")" "$dest/$multiarch/$lib"
  ln -sf "$lib" "$dest/$multiarch/${lib%.1}"
  ldd "$real" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
    case "$soname" in libc.so.*|ld-linux*|linux-vdso*|libbpf.so.*) continue ;; esac
    cp "$(readlink -f "$path")" "$dest/$multiarch/$soname"
  done
done
mkdir -p "$dest/$multiarch/bpf"
cp /usr/$multiarch/bpf/xdp-dispatcher.o /usr/$multiarch/bpf/xsk_def_xdp_prog*.o "$dest/$multiarch/bpf/"
cp -P /usr/$multiarch/libbenchmark.so* /usr/$multiarch/libbenchmark_main.a "$dest/$multiarch/"
# Debian's cpp-httplib is also a shared library (gnio's metrics server links
# it), built with brotli; OpenSSL 3 is on every current distribution.
for lib in libcpp-httplib.so.0.11 libbrotlidec.so.1 libbrotlienc.so.1 libbrotlicommon.so.1; do
  cp -L /usr/$multiarch/$lib "$dest/$multiarch/"
done
ln -sf libcpp-httplib.so.0.11 "$dest/$multiarch/libcpp-httplib.so"
cp -r /usr/$multiarch/cmake/benchmark "$dest/$multiarch/cmake/"
mkdir -p "$dest/$multiarch/pkgconfig"
for pc in libxdp libbpf cpp-httplib; do
  sed -e 's|^prefix=.*|prefix=${pcfiledir}/../../..|' -e 's|^libdir=.*|libdir=${prefix}/'"$multiarch"'|' \
      -e 's|^includedir=.*|includedir=${prefix}/include|' -e 's|^Requires.private:.*||' \
      /usr/$multiarch/pkgconfig/$pc.pc >"$dest/$multiarch/pkgconfig/$pc.pc"
done
# The Python module's header-only dependencies (pybind11 and dlpack.h); the
# GPU machine's own interpreter provides Python.h, numpy, torch and cupy.
cp -r /usr/include/pybind11 /usr/include/dlpack "$dest/include/"
mkdir -p "$dest/lib/cmake"
cp -r /usr/lib/cmake/pybind11 "$dest/lib/cmake/"
# dpkt (pure Python), the Python tests' independent pcap reader.
mkdir -p "$dest/python"
cp -r /usr/lib/python3/dist-packages/dpkt "$dest/python/"
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
# tshark's answers for the application's tests (the GPU machine has no
# tshark): recorded by running those tests here, from a build that has them.
for name in test_app_packet_processing test_app_tunnels; do
  app_test=${GNIO_BUILD:-build}/tests/app/$name
  if command -v tshark >/dev/null && [ -x "$app_test" ]; then
    GNIO_TSHARK_RECORD="$PWD/$dest/tshark-answers" "$app_test" --gtest_brief=1 >/dev/null \
      && echo "tshark answers of $name: $(ls "$dest/tshark-answers" | wc -l) recorded in all"
  else
    echo "tshark answers of $name not recorded (needs tshark and $app_test)"
  fi
done
du -sh "$dest"
