# SPDX-License-Identifier: Apache-2.0
# The dpdk backend on a veth pair (net_af_packet, net_af_xdp PMDs): included
# from this folder's CMakeLists.txt, with its netns helpers (gnio_nettest).
if(NOT GNIO_HAVE_DPDK)
  message(STATUS "gnio: net tests of the dpdk backend not built (the backend is not built)")
  return()
endif()
add_executable(gnio_dpdk_net_tests ${CMAKE_CURRENT_LIST_DIR}/test_dpdk_net.cpp)
target_include_directories(gnio_dpdk_net_tests PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(gnio_dpdk_net_tests PRIVATE gnio_nettest GTest::gtest_main gnio_warnings)
add_dependencies(gnio_dpdk_net_tests gnio_dpdk)
gtest_discover_tests(gnio_dpdk_net_tests TEST_PREFIX "net." DISCOVERY_TIMEOUT 60 PROPERTIES LABELS net TIMEOUT 120)

# End to end through net_af_xdp, the engine and a persistent kernel; on the
# emulated device here, on a CUDA GPU with GNIO_TEST_GPU=auto (label gpu too;
# skipped without a device).
add_executable(gnio_dpdk_net_e2e_tests ${CMAKE_CURRENT_LIST_DIR}/test_dpdk_e2e.cpp)
target_link_libraries(gnio_dpdk_net_e2e_tests PRIVATE gnio_e2e_kernels gnio_nettest GTest::gtest_main gnio_warnings)
add_dependencies(gnio_dpdk_net_e2e_tests gnio_dpdk)
gtest_discover_tests(gnio_dpdk_net_e2e_tests TEST_PREFIX "net." DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS net TIMEOUT 120)
add_test(NAME net.gpu.gnio_dpdk_net_e2e_tests COMMAND gnio_dpdk_net_e2e_tests)
set_tests_properties(net.gpu.gnio_dpdk_net_e2e_tests PROPERTIES LABELS "net;gpu" TIMEOUT 600
  ENVIRONMENT "GNIO_TEST_GPU=auto" SKIP_REGULAR_EXPRESSION "no CUDA device")
