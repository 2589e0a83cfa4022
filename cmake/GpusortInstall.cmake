# Install rules and the package files: `cmake --install build --prefix P` gives
#   P/lib/libgpusort.a (or .so with its SONAME links), P/include/gpusort/, P/bin/gpusort,
#   P/lib/cmake/gpusort/ (find_package(gpusort CONFIG) -> gpusort::gpusort),
#   P/lib/pkgconfig/gpusort.pc, and the Python package when it is built (python/CMakeLists.txt);
#   where MPI was found, the distributed face too: P/lib/libgpusort_distributed.a (or .so),
#   gpusort::distributed (find_package(gpusort COMPONENTS distributed)) and P/bin/gpusort-mpi,
#   which `mpirun -np N gpusort sort` runs from beside gpusort (tools/gpusort/mpi_launch.cpp).
include(CMakePackageConfigHelpers)

set(GPUSORT_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpusort CACHE STRING
    "Where gpusortConfig.cmake is installed, relative to the prefix")

install(TARGETS gpusort EXPORT gpusortTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT library
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT library)
install(DIRECTORY include/gpusort DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT library)
install(EXPORT gpusortTargets NAMESPACE gpusort:: DESTINATION ${GPUSORT_CMAKE_INSTALL_DIR}
        COMPONENT library)

# gpusort::distributed in an export set of its own, which gpusortConfig.cmake loads only where
# MPI is found, so that the rest of the package never needs MPI.
if(TARGET gpusort_distributed)
  install(TARGETS gpusort_distributed EXPORT gpusortDistributedTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT library
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT library)
  install(EXPORT gpusortDistributedTargets NAMESPACE gpusort::
          DESTINATION ${GPUSORT_CMAKE_INSTALL_DIR} COMPONENT library)
endif()

configure_package_config_file(cmake/gpusortConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/gpusortConfig.cmake
                              INSTALL_DESTINATION ${GPUSORT_CMAKE_INSTALL_DIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpusortConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpusortConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/gpusortConfigVersion.cmake
        DESTINATION ${GPUSORT_CMAKE_INSTALL_DIR} COMPONENT library)

# pkg-config: the header includes <vulkan/vulkan.h>, so vulkan is a public requirement (and a
# static libgpusort needs its loader at link time). The prefix is found from the .pc file's own
# place, so that `cmake --install --prefix P` works for any P.
file(RELATIVE_PATH GPUSORT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" GPUSORT_PC_TO_PREFIX ${GPUSORT_PC_TO_PREFIX})
configure_file(cmake/gpusort.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpusort.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpusort.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT library)

if(TARGET gpusort_cli)
  # A shared libgpusort is found next to the install prefix's bin/.
  file(RELATIVE_PATH GPUSORT_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
  set(cli_targets gpusort_cli)
  if(TARGET gpusort_mpi_cli)
    list(APPEND cli_targets gpusort_mpi_cli)  # beside gpusort, which runs it under mpirun
  endif()
  set_target_properties(${cli_targets} PROPERTIES INSTALL_RPATH "$ORIGIN/${GPUSORT_BIN_TO_LIB}")
  install(TARGETS ${cli_targets} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()

if(GPUSORT_BUILD_TESTS)
  # Installs into build/cmake_package/prefix, builds tests/consumer against it, and imports the
  # installed Python package; where MPI was found, runs the consumer of gpusort::distributed and
  # the installed CLI under mpirun (tests/distributed/ sets the mpirun command and environment).
  set(package_mpirun "")
  set(package_env "GPUSORT_DEVICE=llvmpipe" "GPUSORT_VALIDATION=1")
  if(TARGET gpusort_mpi_cli AND GPUSORT_MPIRUN)
    set(package_mpirun ${GPUSORT_MPIRUN})
    set(package_env ${GPUSORT_MPI_TEST_ENV})  # lavapipe and validation too
  endif()
  add_test(NAME cmake_package
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
                   -DGPUSORT_SOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${CMAKE_BINARY_DIR}/cmake_package -DGENERATOR=${CMAKE_GENERATOR}
                   -DCXX=${CMAKE_CXX_COMPILER} -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
                   "-DPYTHON=$<$<BOOL:${GPUSORT_BUILD_PYTHON}>:${Python3_EXECUTABLE}>"
                   -DPYTHON_DIR=${GPUSORT_PYTHON_INSTALL_DIR}
                   "-DMPIRUN=${package_mpirun}"
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/run.cmake)
  set_tests_properties(cmake_package PROPERTIES
                       ENVIRONMENT "${package_env}"
                       FAIL_REGULAR_EXPRESSION "gpusort validation:"
                       TIMEOUT 300)
  # The C API from a C-only consumer of the installed library: tests/consumer/c, built with
  # CMake (LANGUAGES C) and with the C compiler and pkg-config, so that a C linker driver links it.
  add_test(NAME c_package
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
                   -DWORK_DIR=${CMAKE_BINARY_DIR}/c_package -DGENERATOR=${CMAKE_GENERATOR}
                   -DCC=${CMAKE_C_COMPILER} -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/c/run.cmake)
  set_tests_properties(c_package PROPERTIES
                       ENVIRONMENT "GPUSORT_DEVICE=llvmpipe;GPUSORT_VALIDATION=1"
                       FAIL_REGULAR_EXPRESSION "gpusort validation:"
                       TIMEOUT 300)
endif()
