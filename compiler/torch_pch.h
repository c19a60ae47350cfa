// Precompiled for every compiler/ translation unit: LibTorch's headers cost ~10 s per file
// otherwise.
#pragma once
#include <torch/script.h>
