// A stand-in for an official LibTorch library: it exports its own std::filesystem::remove_all, as
// libtorch.so does (pytorch#133437), but where that copy jumps to address 0, this one says so and
// exits with 86. A probe linked with it shows which copy its remove_all call reached.
#include <unistd.h>

#include <filesystem>

namespace {

[[noreturn]] void reached() {
  static const char message[] = "remove_all reached the LibTorch-like copy, not libstdc++'s\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(86);
}

}  // namespace

namespace std::filesystem {

uintmax_t remove_all(const path&, error_code&) { reached(); }
uintmax_t remove_all(const path&) { reached(); }

}  // namespace std::filesystem
