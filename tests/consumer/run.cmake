# The cmake_package test: installs the build tree into WORK_DIR/prefix, builds and runs this consumer
# against it with find_package and with pkg-config (when found), imports the installed Python
# package (when PYTHON is given), then configures the consumer with add_subdirectory of the source
# tree. With MPIRUN (the build tree has gpusort::distributed and gpusort-mpi), the distributed face
# too: the consumer of gpusort::distributed and the installed `gpusort sort` under MPIRUN -np 2.
#   cmake -DBUILD_DIR=... -DGPUSORT_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DLIBDIR=lib
#         [-DPYTHON=python3 -DPYTHON_DIR=lib/python3.X/site-packages] ["-DMPIRUN=mpirun;FLAGS..."]
#         -P run.cmake
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

set(distributed OFF)
if(MPIRUN)
  set(distributed ON)
  foreach(file include/gpusort/distributed.hpp bin/gpusort-mpi)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "cmake_package: ${file} was not installed")
    endif()
  endforeach()
endif()

run(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/find_package -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    -DGPUSORT_DISTRIBUTED=${distributed})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/find_package)
run(${WORK_DIR}/find_package/gpusort_consumer)

if(MPIRUN)
  run(${MPIRUN} -np 2 ${WORK_DIR}/find_package/gpusort_distributed_consumer)
  # The installed CLI sorts a file on 2 ranks (it runs the installed gpusort-mpi). The keys are
  # u32 of four equal printable bytes each, so that the file and its sorted form are text.
  set(letters QWERTYUIOPASDFGHJKLZXCVBNMqwertyuiopasdfghjklzxcvbnmQAZ)
  string(REGEX REPLACE "(.)" "\\1\\1\\1\\1" keys ${letters})
  string(REGEX MATCHALL "." sorted_letters ${letters})
  list(SORT sorted_letters)
  list(JOIN sorted_letters "" sorted_letters)
  string(REGEX REPLACE "(.)" "\\1\\1\\1\\1" expected ${sorted_letters})
  file(WRITE ${WORK_DIR}/cli_keys.bin ${keys})
  run(${MPIRUN} -np 2 ${prefix}/bin/gpusort sort ${WORK_DIR}/cli_keys.bin ${WORK_DIR}/cli_sorted.bin
      --type u32)
  file(READ ${WORK_DIR}/cli_sorted.bin sorted)
  if(NOT sorted STREQUAL expected)
    message(FATAL_ERROR "cmake_package: `mpirun -np 2 gpusort sort` wrote '${sorted}', expected "
                        "'${expected}'")
  endif()
  message(STATUS "cmake_package: the installed gpusort sorted a file on 2 ranks")
endif()

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
