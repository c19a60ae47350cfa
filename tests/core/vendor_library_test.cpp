// Loading an optional vendor library (CUPTI, NVRTC, the CUDA driver all go through this): the
// first candidate that opens and has every required entry point wins; one that opens without an
// entry point is passed over; when none works, the message names every candidate and why. Tried
// on the C library's libm, which every machine has.
#include <gtest/gtest.h>

#include <cmath>

#include "core/vendor_library.h"

namespace tcprof {
namespace {

struct MathApi {
  double (*cos)(double) = nullptr;
  double (*sqrt)(double) = nullptr;
  void (*newer)() = nullptr;  // optional: no libm has it
};

TEST(VendorLibrary, TheFirstCandidateWithEveryEntryPointIsLoaded) {
  MathApi api;
  std::string tried = "unchanged";
  auto lib = open_vendor_library({"libtcprof-not-there.so.1", "libm.so.6"},
                                 [&](SymbolBinder& b) {
                                   b.bind(api.cos, "cos");
                                   b.bind(api.sqrt, "sqrt");
                                   b.bind_optional(api.newer, "tcprof_no_such_entry_point");
                                 },
                                 &tried);
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->path, "libm.so.6");
  EXPECT_NE(lib->handle, nullptr);
  ASSERT_NE(api.cos, nullptr);
  EXPECT_DOUBLE_EQ(api.cos(0.0), 1.0);
  EXPECT_DOUBLE_EQ(api.sqrt(16.0), 4.0);
  EXPECT_EQ(api.newer, nullptr);
  EXPECT_EQ(tried, "unchanged");  // only written when nothing works
}

TEST(VendorLibrary, NoCandidateWorkingNamesEachAndWhy) {
  MathApi api;
  std::string tried;
  auto lib = open_vendor_library({"libtcprof-not-there.so.1", "libm.so.6"},
                                 [&](SymbolBinder& b) {
                                   b.bind(api.cos, "cos");
                                   b.bind(api.newer, "tcprof_no_such_entry_point");
                                 },
                                 &tried);
  EXPECT_FALSE(lib);
  EXPECT_NE(tried.find("libtcprof-not-there.so.1 ("), std::string::npos) << tried;
  EXPECT_NE(tried.find("libm.so.6 (has no tcprof_no_such_entry_point)"), std::string::npos) << tried;
  EXPECT_FALSE(open_vendor_library({}, [](SymbolBinder&) {}, &tried));
  EXPECT_EQ(tried, "no paths");
}

TEST(VendorLibrary, PresenceIsCheckedWithoutKeepingItOpen) {
  EXPECT_TRUE(vendor_library_present("libm.so.6"));
  EXPECT_FALSE(vendor_library_present("libtcprof-not-there.so.1"));
}

}  // namespace
}  // namespace tcprof
