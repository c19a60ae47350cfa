// The remove_all probe for a static libstdc++: it calls std::filesystem::remove_all and nothing
// else of libstdc++'s filesystem operations (the tree is made with POSIX calls). The stand-in
// library defines only remove_all, where official LibTorch defines nearly all of them: any other
// operation would pull libstdc++'s whole fs_ops member from the archive, whose definitions then
// win over the library's and hide what happens with the real one.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

int main() {
  char dir[] = "/tmp/tcprof-static-remove-all-probe-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  const std::string sub = std::string(dir) + "/a";
  if (mkdir(sub.c_str(), 0700) != 0) return 2;
  std::error_code ec;
  std::uintmax_t removed = std::filesystem::remove_all(dir, ec);
  if (ec || access(dir, F_OK) == 0) {
    std::printf("remove_all failed: %s\n", ec.message().c_str());
    return 1;
  }
  std::printf("removed %ju entries\n", removed);
  return 0;
}
