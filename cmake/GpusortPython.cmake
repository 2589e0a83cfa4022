# Decides GPUSORT_BUILD_PYTHON and finds the Python the module is built for.
#
# Left unset, the option is on when a Python 3 with NumPy, its development headers and pybind11's
# CMake package are all found. Set ON (as pyproject.toml does), they are required, except NumPy:
# pybind11's NumPy support needs no NumPy headers, so a wheel builds without it.
#
# The Python is Python3_EXECUTABLE when given (scikit-build-core gives it), else the first of
# `python3` on PATH and /usr/bin/python3 that imports NumPy: a developer's PATH may start with a
# pyenv or venv python that lacks it, while the tests need the distribution's (Debian's
# python3-numpy).

function(gpusort_python_with_numpy out)
  if(Python3_EXECUTABLE)
    set(candidates ${Python3_EXECUTABLE})
  else()
    set(candidates)
  endif()
  if(NOT Python3_EXECUTABLE)
    find_program(_gpusort_path_python3 NAMES python3 NO_CACHE)
    if(_gpusort_path_python3)
      list(APPEND candidates ${_gpusort_path_python3})
    endif()
    list(APPEND candidates /usr/bin/python3)
  endif()
  foreach(python IN LISTS candidates)
    if(EXISTS ${python})
      execute_process(COMMAND ${python} -c "import numpy" RESULT_VARIABLE status
                      OUTPUT_QUIET ERROR_QUIET)
      if(status EQUAL 0)
        set(${out} ${python} PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# Under add_subdirectory / FetchContent the module is built only when asked for.
if(NOT DEFINED GPUSORT_BUILD_PYTHON AND NOT PROJECT_IS_TOP_LEVEL)
  option(GPUSORT_BUILD_PYTHON "Build the Python module (pybind11, NumPy)" OFF)
endif()

if(NOT DEFINED GPUSORT_BUILD_PYTHON OR GPUSORT_BUILD_PYTHON)
  if(DEFINED GPUSORT_BUILD_PYTHON)
    set(_gpusort_python_required REQUIRED)
  else()
    set(_gpusort_python_required)
  endif()
  gpusort_python_with_numpy(_gpusort_python)
  if(_gpusort_python AND NOT Python3_EXECUTABLE)
    set(Python3_EXECUTABLE ${_gpusort_python} CACHE FILEPATH "The Python gpusort's module is for")
  endif()
  if(_gpusort_python OR _gpusort_python_required)
    find_package(Python3 COMPONENTS Interpreter Development.Module ${_gpusort_python_required})
    # pybind11's config uses FindPython's result when Python3_FOUND is set.
    find_package(pybind11 CONFIG ${_gpusort_python_required})
  endif()
  if(NOT DEFINED GPUSORT_BUILD_PYTHON)
    if(_gpusort_python AND Python3_FOUND AND pybind11_FOUND)
      set(_gpusort_python_default ON)
    else()
      set(_gpusort_python_default OFF)
      message(STATUS "gpusort: no Python 3 with NumPy, headers and pybind11 found: the Python "
                     "module is not built (Debian: python3-dev python3-numpy pybind11-dev)")
    endif()
    option(GPUSORT_BUILD_PYTHON "Build the Python module (pybind11, NumPy)" ${_gpusort_python_default})
  endif()
endif()
