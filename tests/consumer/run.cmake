# The cmake_package test: installs the build tree into WORK_DIR/prefix, builds and runs this consumer
# against it with find_package and with pkg-config (when found), imports the installed Python
# package (when PYTHON is given), then configures the consumer with add_subdirectory of the source
# tree.
#   cmake -DBUILD_DIR=... -DGPUSORT_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DLIBDIR=lib
#         [-DPYTHON=python3 -DPYTHON_DIR=lib/python3.X/site-packages] -P run.cmake
set(consumer ${CMAKE_CURRENT_LIST_DIR})
set(prefix ${WORK_DIR}/prefix)
if(NOT LIBDIR)
  set(LIBDIR lib)
endif()
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "cmake_package: failed (${status}): ${command}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file include/gpusort/gpusort.hpp bin/gpusort ${LIBDIR}/pkgconfig/gpusort.pc
             ${LIBDIR}/cmake/gpusort/gpusortConfig.cmake
             ${LIBDIR}/cmake/gpusort/gpusortConfigVersion.cmake)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "cmake_package: ${file} was not installed")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/find_package -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/find_package)
run(${WORK_DIR}/find_package/gpusort_consumer)

find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig
                          ${PKG_CONFIG} --cflags --libs gpusort
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CXX} -std=c++20 -O1 ${consumer}/main.cpp ${flags} -o ${WORK_DIR}/pkg_config_consumer)
  # pkg-config gives no run path: a shared libgpusort is found through LD_LIBRARY_PATH.
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${LIBDIR} ${WORK_DIR}/pkg_config_consumer)
else()
  message(STATUS "cmake_package: no pkg-config, gpusort.pc not checked")
endif()

if(PYTHON)
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${PYTHON_DIR} PYTHONDONTWRITEBYTECODE=1
      ${PYTHON} -c "import gpusort\nassert list(gpusort.sort([3, 1, 2])) == [1, 2, 3]\nprint('installed gpusort module: ok')")
endif()

run(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/add_subdirectory -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DGPUSORT_SOURCE_DIR=${GPUSORT_SOURCE_DIR})
