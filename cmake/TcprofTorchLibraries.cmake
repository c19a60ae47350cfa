# tcprof_torch_libraries(OUT): TORCH_LIBRARIES as find_package(Torch) set them, with libc10 taken
# from beside the LibTorch that was found. TorchConfig.cmake looks for c10 with
# find_library(... PATHS <prefix>/lib), which searches the system first: with Debian's libtorch-dev
# installed beside a pip wheel it linked Debian's libc10.so next to the wheel's other libraries.
# Used by tcprof's build and by its installed CMake package.
function(tcprof_torch_libraries out)
  set(libraries ${TORCH_LIBRARIES})
  set(beside "${TORCH_INSTALL_PREFIX}/lib/libc10.so")
  if(c10_LIBRARY AND EXISTS "${beside}")
    file(REAL_PATH "${c10_LIBRARY}" found)
    file(REAL_PATH "${beside}" wanted)
    if(NOT found STREQUAL wanted)
      set(libraries "")
      foreach(library IN LISTS TORCH_LIBRARIES)
        if(library STREQUAL c10_LIBRARY)
          set(library "${beside}")
        endif()
        list(APPEND libraries "${library}")
      endforeach()
    endif()
  endif()
  set(${out} ${libraries} PARENT_SCOPE)
endfunction()
