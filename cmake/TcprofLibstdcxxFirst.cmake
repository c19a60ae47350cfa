# The link option that puts libstdc++ before LibTorch in an executable (docs/build.md): one
# definition for tcprof's own build (cmake/TcprofLibTorch.cmake) and for programs built with
# find_package(tcprof) (installed beside tcprofConfig.cmake).
#
# Official LibTorch builds export copies of libstdc++'s std::filesystem functions that crash, and
# each call binds to the first library that defines it: -lstdc++ goes in front, kept by
# --no-as-needed. A toolchain whose libstdc++ is only a static archive (the GPU machines' /opt/gcc
# g++) takes from an archive only the symbols still undefined where it appears: at the front, none,
# so libtorch.so satisfied the program's calls. `-u` names one symbol of each of libstdc++'s
# filesystem members (fs_ops, fs_path, fs_dir) so that the front -lstdc++ pulls them into the
# program there; with a shared libstdc++ they only make it needed, and an unknown one is ignored.
set(_tcprof_fs_members
  _ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code
  _ZNSt10filesystem7__cxx114path14_M_split_cmptsEv
  _ZNSt10filesystem7__cxx1118directory_iteratorC1ERKNS0_4pathENS_17directory_optionsEPSt10error_code)
list(TRANSFORM _tcprof_fs_members PREPEND "-u,")
list(JOIN _tcprof_fs_members "," _tcprof_fs_undefined)
set(TCPROF_LIBSTDCXX_FIRST_OPTION "LINKER:${_tcprof_fs_undefined},--push-state,--no-as-needed,-lstdc++,--pop-state")
unset(_tcprof_fs_members)
unset(_tcprof_fs_undefined)
