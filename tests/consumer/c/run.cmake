# The c_package test: installs the library component of the build tree into WORK_DIR/prefix, then
# builds this C11 consumer against it and runs it: with CMake (a LANGUAGES C project, find_package)
# and with the C compiler alone and pkg-config (--libs, and --static --libs), so that the C linker
# driver, never the C++ one, links libgpusort.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCC=cc -DLIBDIR=lib -P run.cmake
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
    message(FATAL_ERROR "c_package: failed (${status}): ${command}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component library)

run(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/find_package -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/find_package)
run(${WORK_DIR}/find_package/gpusort_c_consumer)

find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "c_package: no pkg-config, gpusort.pc not checked from C")
  return()
endif()
# `--libs` alone must link too: where only libgpusort.a is installed, its C++ runtime is in Libs.
foreach(mode libs static)
  set(arguments --cflags --libs gpusort)
  if(mode STREQUAL "static")
    list(PREPEND arguments --static)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig
                          ${PKG_CONFIG} ${arguments}
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  list(JOIN arguments " " shown)
  message(STATUS "c_package: pkg-config ${shown}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CC} -std=c11 -pedantic-errors -Wall -Wextra -O1 ${consumer}/main.c ${flags}
      -o ${WORK_DIR}/pkg_config_${mode})
  # pkg-config gives no run path: a shared libgpusort is found through LD_LIBRARY_PATH.
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${LIBDIR} ${WORK_DIR}/pkg_config_${mode})
endforeach()
