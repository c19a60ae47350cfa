// Says where its std::filesystem calls go, removes a small directory tree with
// std::filesystem::remove_all, as TempDir's destructor does, and says whether it worked (exit 0, "removed N entries") and whether the libstdc++ guard had to
// restart the process first, and what LD_PRELOAD its children would see.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/libstdcxx_binding.h"

int main() {
  namespace fs = std::filesystem;
  // Where this process's std::filesystem calls go, before one is made (a copy may crash).
  std::printf("%s\n", tcprof::libstdcxx::describe(tcprof::libstdcxx::check()).c_str());
  std::fflush(stdout);
  fs::path dir = fs::temp_directory_path() / ("tcprof-remove-all-probe-" + std::to_string(getpid()));
  fs::create_directories(dir / "a" / "b");
  std::ofstream(dir / "a" / "b" / "file") << "x";
  std::error_code ec;
  uintmax_t removed = fs::remove_all(dir, ec);
  if (ec || fs::exists(dir)) {
    std::printf("remove_all failed: %s\n", ec.message().c_str());
    return 1;
  }
  std::printf("removed %ju entries%s\n", removed,
              tcprof::libstdcxx::restarted() ? " (restarted with libstdc++ first)" : "");
  // What this process's children would inherit: the caller's LD_PRELOAD, not the guard's.
  const char* preload = std::getenv("LD_PRELOAD");
  std::printf("children's LD_PRELOAD: %s\n", preload ? preload : "<unset>");
  return 0;
}
