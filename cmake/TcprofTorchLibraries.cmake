# tcprof_torch_libraries(OUT): TORCH_LIBRARIES as find_package(Torch) set them, mended twice for
# the LibTorch of a pip wheel. Used by tcprof's build and by its installed CMake package.
# - libc10 from beside the LibTorch that was found: TorchConfig.cmake looks for c10 with
#   find_library(... PATHS <prefix>/lib), which searches the system first, and with Debian's
#   libtorch-dev installed too it linked Debian's libc10.so next to the wheel's other libraries.
# - Without the CUDA toolkit's libcudart and libnvrtc where the wheel brings its own CUDA libraries
#   (site-packages/nvidia): tcprof calls no CUDA runtime or NVRTC function itself (CUPTI and NVRTC
#   are loaded at run time) and LibTorch's CUDA libraries find their own. With a toolkit older than
#   the wheel's CUDA (13.0 beside torch 2.15+cu132), the toolkit's folder came first at link time,
#   where libtorch_cuda's NCCL was too old, and would have come first at run time.
function(tcprof_torch_libraries out)
  set(libraries ${TORCH_LIBRARIES})
  if(EXISTS "${TORCH_INSTALL_PREFIX}/../nvidia")
    list(FILTER libraries EXCLUDE REGEX "/lib(cudart|nvrtc)[.]so")
    if(TARGET torch::cudart)
      set_property(TARGET torch::cudart PROPERTY INTERFACE_LINK_LIBRARIES "")
    endif()
    set(TORCH_LIBRARIES ${libraries})
  endif()
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
