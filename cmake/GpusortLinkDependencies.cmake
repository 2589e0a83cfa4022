# What a program that links libgpusort needs besides it, for every consumer: CMake's own targets,
# the installed CMake package and gpusort.pc (GpusortInstall.cmake), C and C++ programs alike.
#   - Vulkan (PUBLIC: the headers include <vulkan/vulkan.h>) and threads (std::thread);
#   - a static libgpusort also needs the C++ runtime. A C++ linker driver adds it, a C one (cc, or
#     a CMake project without CXX) does not. CMake's export records the library's language
#     (IMPORTED_LINK_INTERFACE_LANGUAGES CXX), but a consumer's CMake acts on it only where CXX is
#     enabled: it then links with the C++ driver, or adds CMAKE_CXX_IMPLICIT_LINK_LIBRARIES, which
#     a LANGUAGES C project does not have. So the runtime is named in the interface, for links that
#     the C driver makes ($<LINK_LANGUAGE:C>).
# Sets GPUSORT_PC_LIBS and GPUSORT_PC_LIBS_PRIVATE, the gpusort.pc lines beyond -lgpusort.
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
target_link_libraries(gpusort PRIVATE Threads::Threads)

# The libraries the C++ compiler's driver adds to a link beyond the C runtime that any driver adds:
# stdc++ and m for g++ (c++ with libc++).
set(GPUSORT_CXX_RUNTIME)
foreach(library IN LISTS CMAKE_CXX_IMPLICIT_LINK_LIBRARIES)
  if(NOT library MATCHES "^(c|gcc|gcc_s|gcc_eh)$" AND NOT library IN_LIST GPUSORT_CXX_RUNTIME)
    list(APPEND GPUSORT_CXX_RUNTIME ${library})
  endif()
endforeach()

set(GPUSORT_PC_RUNTIME)
foreach(library IN LISTS GPUSORT_CXX_RUNTIME)
  if(library MATCHES "^-" OR IS_ABSOLUTE "${library}")
    string(APPEND GPUSORT_PC_RUNTIME " ${library}")
  else()
    string(APPEND GPUSORT_PC_RUNTIME " -l${library}")
  endif()
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND GPUSORT_PC_RUNTIME " ${CMAKE_THREAD_LIBS_INIT}")
endif()

get_target_property(GPUSORT_LIBRARY_TYPE gpusort TYPE)
if(GPUSORT_LIBRARY_TYPE STREQUAL "STATIC_LIBRARY")
  foreach(library IN LISTS GPUSORT_CXX_RUNTIME)
    target_link_libraries(gpusort INTERFACE "$<$<LINK_LANGUAGE:C>:${library}>")
  endforeach()
  # Only the archive is installed: `pkg-config --libs` (without --static) must link too.
  set(GPUSORT_PC_LIBS "${GPUSORT_PC_RUNTIME}")
  set(GPUSORT_PC_LIBS_PRIVATE "")
else()
  # libgpusort.so records its own runtime (DT_NEEDED): listed for --static only.
  set(GPUSORT_PC_LIBS "")
  set(GPUSORT_PC_LIBS_PRIVATE "${GPUSORT_PC_RUNTIME}")
endif()
