// Opening a run database for writing, safely when several processes create the same new file.
//
// A new file is built under a private name (WAL mode, schema) and hard-linked into place: link()
// fails when the name exists, so exactly one creator wins and every other process opens the
// finished file. Without this, two processes racing on an empty file could each see the other's
// half-written header ("not an SQLite file") or lose the WAL switch to SQLITE_BUSY.
#pragma once
#include <memory>
#include <string>

namespace tcprof {

class Database;

// Opens (creating when missing) `path` for writing: WAL, synchronous=NORMAL, schema created or
// validated. Throws Error(Input) naming the file and the real cause (the folder is missing or not
// writable, the file is not SQLite, it is locked by another process for too long, ...).
std::unique_ptr<Database> open_store_for_writing(const std::string& path);

}  // namespace tcprof
