// The tcprof database schema (PRODUCT.md, "Database"). Bump kSchemaVersion whenever a table or a
// column's meaning changes; readers refuse files with a newer version.
#pragma once
#include <cstdint>
#include <string>

namespace tcprof {

class Database;

// 2: kernel_summaries (--profile summary aggregates) and run_counters (e.g. CUPTI dropped records).
// 3: sources (user source files), runs.source/rank/world_size, compiles.attempt, graphs.kind/fx_key
//    (imported PyTorch runs); compile status `incomplete`, kernel kind `autotune`.
// 4: runs.last_event_at (time of the last committed batch); run status `interrupted`.
// 5: kernels.bytes and kernel_summaries.bytes (copies and fills), calls.peak_gpu_bytes,
//    steps.forward_ns/backward_ns/optimizer_ns.
// 6: kernels.mangled_name and kernel_summaries.mangled_name: `name` is demangled as it is written
//    (core/kernel_name.h); readers demangle the names of older files as they read them.
constexpr int kSchemaVersion = 6;

// Creates the tables when the file is new. Throws Error(Input) naming the file when it holds
// another application's tables or a schema newer than this build understands.
void create_or_validate_schema(Database& db);

// Checks that an existing file is a tcprof database this build can read.
// Returns the file's schema version.
int validate_schema(Database& db);

// Removes run `run_id` and every row that belongs to it, in one transaction (a re-import that
// starts over, `import --follow` restarted). The caller holds a writable, validated database.
void delete_run(Database& db, int64_t run_id);

}  // namespace tcprof
