# SPDX-License-Identifier: Apache-2.0
# libpcap as gnio::pcap: through pkg-config where it exists, else by looking
# for the header and library directly (machines without pkg-config, or a
# libpcap unpacked under CMAKE_PREFIX_PATH). Also used by gnioConfig.cmake.
if(NOT TARGET gnio::pcap)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PCAP QUIET IMPORTED_TARGET libpcap)
  endif()
  find_path(GNIO_PCAP_INCLUDE_DIR pcap/pcap.h HINTS ${PCAP_INCLUDE_DIRS})
  find_library(GNIO_PCAP_LIBRARY NAMES pcap libpcap.so.0.8 HINTS ${PCAP_LIBRARY_DIRS})
  if(NOT GNIO_PCAP_INCLUDE_DIR OR NOT GNIO_PCAP_LIBRARY)
    message(FATAL_ERROR "gnio needs libpcap: install libpcap-dev")
  endif()
  add_library(gnio::pcap INTERFACE IMPORTED)
  set_target_properties(gnio::pcap PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${GNIO_PCAP_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${GNIO_PCAP_LIBRARY}")
endif()
