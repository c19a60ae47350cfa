# How tcprof links LibTorch (included by the top-level CMakeLists.txt after find_package(Torch)).

# Debian's libc10 and the toolkit's CUDA runtime must not stand in for a wheel's
# (cmake/TcprofTorchLibraries.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/TcprofTorchLibraries.cmake)
tcprof_torch_libraries(TORCH_LIBRARIES)

# One interface target carries LibTorch's headers (as system headers: their warnings are not
# ours), flags and libraries. Only compiler/, profiler/ and cli/ may link it.
add_library(tcprof_torch INTERFACE)
target_include_directories(tcprof_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_link_libraries(tcprof_torch INTERFACE ${TORCH_LIBRARIES})
separate_arguments(_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(tcprof_torch INTERFACE ${_torch_flags})
# UBSan's vptr check names the typeinfo of each polymorphic class it checks, and LibTorch does not
# export all of them (Debian's 1.13 lacks c10::DynamicType's: the sanitized tcprof did not link).
# Code that includes LibTorch goes without that one check; the libraries without LibTorch keep it.
if(TCPROF_SANITIZE MATCHES "undefined")
  target_compile_options(tcprof_torch INTERFACE -fno-sanitize=vptr)
endif()

# A pip wheel's LibTorch ships the headers of libraries it links statically and hides (fmt 12,
# oneDNN 3) in its include folder, which every command line that includes LibTorch searches before
# the system's. tcprof links Debian's fmt and its own oneDNN (cmake/TcprofOneDnn.cmake), so their
# own headers must win: links to them in a folder of their own, searched first (-I comes before
# every -isystem). Without it the wheel build compiled against fmt 12 and linked fmt 9.
get_target_property(_fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
set(_before_torch ${CMAKE_BINARY_DIR}/headers-before-torch)
file(REMOVE_RECURSE ${_before_torch})
foreach(_pair "fmt=${_fmt_include}" "oneapi=${TCPROF_DNNL_INCLUDE_DIR}")
  string(REPLACE "=" ";" _pair "${_pair}")
  list(GET _pair 0 _name)
  list(LENGTH _pair _n)
  if(_n LESS 2 OR NOT EXISTS "${TORCH_INSTALL_PREFIX}/include/${_name}")
    continue()
  endif()
  list(GET _pair 1 _ours)
  if(EXISTS "${_ours}/${_name}" AND NOT _ours STREQUAL "${TORCH_INSTALL_PREFIX}/include")
    file(MAKE_DIRECTORY ${_before_torch})
    file(CREATE_LINK "${_ours}/${_name}" "${_before_torch}/${_name}" SYMBOLIC)
    message(STATUS "tcprof: ${_ours}/${_name} comes before LibTorch's own ${_name} headers")
  endif()
endforeach()
if(EXISTS ${_before_torch})
  target_include_directories(tcprof_torch BEFORE INTERFACE ${_before_torch})
endif()

# Programs need libstdc++ before LibTorch among the libraries they load: official LibTorch builds
# export copies of libstdc++'s std::filesystem functions that crash, and each call binds to the
# first library that defines it (core/libstdcxx_binding.h). One -Wl, argument on each executable,
# so that the compiler driver hands it to the linker unread and in place; with the -u symbols a
# static-only libstdc++ needs, it is defined once in cmake/TcprofLibstdcxxFirst.cmake
# (find_package(tcprof) uses it too). The guard below covers what no link option can promise.
include(${CMAKE_CURRENT_LIST_DIR}/TcprofLibstdcxxFirst.cmake)
add_library(tcprof_libstdcxx_first INTERFACE)
target_link_options(tcprof_libstdcxx_first INTERFACE "${TCPROF_LIBSTDCXX_FIRST_OPTION}")

# Where a toolchain still orders them otherwise, this guard restarts the program with libstdc++
# first before main runs (an object library: linked as an object, no archive can drop it).
add_library(tcprof_libstdcxx_guard OBJECT ${PROJECT_SOURCE_DIR}/core/libstdcxx_guard.cpp)
target_include_directories(tcprof_libstdcxx_guard PUBLIC ${PROJECT_SOURCE_DIR})

# Every executable that links LibTorch, directly or through tcprof's libraries, gets both.
# Called at the end of the top-level CMakeLists.txt, when every target exists.
function(_tcprof_links_libtorch target out)
  set(seen "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue item)
    if(NOT TARGET ${item} OR item IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${item})
    if(item STREQUAL "tcprof_torch")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    get_target_property(type ${item} TYPE)
    set(deps "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(direct ${item} LINK_LIBRARIES)
      if(direct)
        list(APPEND deps ${direct})
      endif()
    endif()
    get_target_property(interface ${item} INTERFACE_LINK_LIBRARIES)
    if(interface)
      list(APPEND deps ${interface})
    endif()
    foreach(dep IN LISTS deps)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      list(APPEND queue ${dep})
    endforeach()
  endwhile()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

function(_tcprof_targets_in dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _tcprof_targets_in(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(tcprof_guard_libtorch_executables)
  _tcprof_targets_in(${PROJECT_SOURCE_DIR} targets)
  set(guarded "")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      _tcprof_links_libtorch(${target} links)
      if(links)
        target_link_libraries(${target} PRIVATE tcprof_libstdcxx_first tcprof_libstdcxx_guard)
        list(APPEND guarded ${target})
      endif()
    endif()
  endforeach()
  list(LENGTH guarded n)
  message(STATUS "tcprof: ${n} executables link LibTorch with libstdc++ first and the restart guard")
endfunction()
