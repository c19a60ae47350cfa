# `cmake --install` and `make package` (CPack, a .deb): the tcprof and tcprof-gui programs, the C++
# API (libtcprof, <tcprof/tcprof.h>, find_package(tcprof)), docs, bash completion and a sample run
# database to try `tcprof report` on. Included last by the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Installed programs find a LibTorch outside the system's library folders (a pip wheel's) where
# it was at build time, as the build tree does.
set(_torch_rpath "")
if(NOT TORCH_INSTALL_PREFIX STREQUAL "/usr")
  set(_torch_rpath "${TORCH_INSTALL_PREFIX}/lib")
endif()
# The same for a oneDNN from a Python environment (cmake/TcprofOneDnn.cmake).
if(TCPROF_DNNL_LIBRARY)
  get_filename_component(_dnnl_dir "${TCPROF_DNNL_LIBRARY}" DIRECTORY)
  if(NOT _dnnl_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    list(APPEND _torch_rpath "${_dnnl_dir}")
  endif()
endif()
set_target_properties(tcprof tcprof_api PROPERTIES INSTALL_RPATH "${_torch_rpath}" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tcprof RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET tcprof-gui)
  install(TARGETS tcprof-gui RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The C++ API. Its header includes "core/error.h" by a path relative to itself.
target_include_directories(tcprof_api INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS tcprof_api EXPORT tcprofTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/api/tcprof.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tcprof)
install(FILES ${PROJECT_SOURCE_DIR}/core/error.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tcprof/core)
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tcprof)
install(EXPORT tcprofTargets NAMESPACE tcprof:: DESTINATION ${_cmake_dir})
get_filename_component(TCPROF_TORCH_CMAKE_ROOT "${Torch_DIR}/.." ABSOLUTE)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tcprofConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/tcprofConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tcprofConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tcprofConfig.cmake ${CMAKE_BINARY_DIR}/tcprofConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TcprofTorchLibraries.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TcprofLibstdcxxFirst.cmake
        DESTINATION ${_cmake_dir})

# Docs, the example that uses the API, bash completion (written by tcprof itself, so it lists the
# flags this build has), and sample data: a recorded run and three small models.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/cpp_api/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/cpp_api)
set(_completion ${CMAKE_BINARY_DIR}/completion/tcprof)
add_custom_command(OUTPUT ${_completion}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/completion
                   COMMAND $<TARGET_FILE:tcprof> --bash-completion > ${_completion}
                   DEPENDS tcprof COMMENT "Writing bash completion for tcprof")
set(_sample_db ${CMAKE_BINARY_DIR}/samples/sample-run.db)
add_custom_command(OUTPUT ${_sample_db}
                   COMMAND $<TARGET_FILE:tcprof-sample-db> ${_sample_db}
                   DEPENDS tcprof-sample-db COMMENT "Writing the sample run database")
add_custom_target(tcprof_install_data ALL DEPENDS ${_completion} ${_sample_db})
install(FILES ${_completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${_sample_db} DESTINATION ${CMAKE_INSTALL_DATADIR}/tcprof/samples)
install(FILES ${TCPROF_SAMPLE_MODELS_DIR}/gpt_tiny.pt ${TCPROF_SAMPLE_MODELS_DIR}/submodule_break.pt
              ${TCPROF_SAMPLE_MODELS_DIR}/cnn.pt
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tcprof/samples)

# make package: a .deb for Debian 12 whose dependencies dpkg-shlibdeps reads off the binaries
# (Debian's LibTorch, Qt, SQLite...). The cpp backend compiles its kernels with the system's C++
# compiler at run time, hence g++. Only a build against Debian's LibTorch makes a useful .deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tcprof)
set(CPACK_PACKAGE_VENDOR "tcprof")
set(CPACK_PACKAGE_CONTACT "tcprof developers <tcprof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Makes PyTorch model compilation understandable and fast")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "tcprof compiles TorchScript models into fused native kernels and records every graph break, guard, "
       "recompile, compile phase and kernel timing into SQLite; a CLI, CI gates and a Qt desktop app read it.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++")
# Debian's LibTorch calls whatever libblas.so.3 is installed: OpenBLAS, not the reference BLAS.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libtorch-dev, cmake")
set(CPACK_STRIP_FILES ON)
include(CPack)
