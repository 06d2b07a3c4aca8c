# SPDX-License-Identifier: Apache-2.0
# nic_bench: live traffic on a veth pair (namespaces and links over
# rtnetlink, tests/net/netns_util), AF_XDP and DPDK receivers into a
# persistent kernel against an AF_PACKET baseline and, where installed,
# xdp-bench, xdp-filter and dpdk-testpmd. Needs root to run.
# One kind of row per file under nic/; only gnio's receivers launch a kernel.
add_executable(gnio_nic_bench nic_bench_main.cpp nic/run.cpp nic/pair.cpp nic/window.cpp nic/row.cpp
  nic/tool_row.cpp nic/xdp_tools.cpp nic/testpmd.cpp nic/report.cpp nic/traffic.cpp nic/tools.cpp
  ${PROJECT_SOURCE_DIR}/tests/net/netns_util.cpp)
gnio_kernel_sources(gnio_nic_bench nic/receivers.cu)
target_include_directories(gnio_nic_bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests/net)
target_link_libraries(gnio_nic_bench PRIVATE gnio_bench_common gnio::gnio CLI11::CLI11 nlohmann_json::nlohmann_json gnio_warnings)
