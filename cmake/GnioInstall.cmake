# SPDX-License-Identifier: Apache-2.0
include(CMakePackageConfigHelpers)
install(DIRECTORY include/gnio DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gnio gnio_warnings EXPORT gnioTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT gnioTargets NAMESPACE gnio:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gnio)
configure_package_config_file(cmake/gnioConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/gnioConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gnio)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gnioConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gnioConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/gnioConfigVersion.cmake ${CMAKE_CURRENT_SOURCE_DIR}/cmake/GnioPcap.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gnio)
set(GNIO_PC_CFLAGS "")
set(GNIO_PC_LIBS "")
if(NOT GNIO_LIBCUXX_INCLUDE_DIR STREQUAL "/usr/include")
  set(GNIO_PC_CFLAGS "-I${GNIO_LIBCUXX_INCLUDE_DIR}")
endif()
if(GNIO_HAVE_CUDA)
  string(APPEND GNIO_PC_CFLAGS " -DGNIO_HAVE_CUDA=1 -I${CUDAToolkit_INCLUDE_DIRS}")
  set(GNIO_PC_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
configure_file(cmake/gnio.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gnio.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gnio.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
