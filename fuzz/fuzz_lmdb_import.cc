// libFuzzer target: LMDB data files, as `zrec append-lmdb` reads them (the input is the
// data file of an environment made with MDB_NOSUBDIR; the seeds are small environments
// with inline and overflow values). LMDB trusts every page number, offset and size in
// its memory-mapped file: whatever a damaged one claims, append-lmdb must end with an
// error or a store that verifies, never SIGBUS/SIGSEGV, a sanitizer report, or memory
// beyond libFuzzer's limit (scripts/fuzz.sh).
#include <string>

#include "fuzz_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec::fuzz;
  const std::string env = fresh("env.mdb"), store = fresh("store"), keys = fresh("keys");
  fresh("env.mdb-lock");
  write_file(env, data, size);
  if (zrec_cli({"create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", "--shards", "1", store}) != 0)
    __builtin_trap();
  if (zrec_cli({"append-lmdb", "--window-mib", "1", "--keys", keys, store, env}) == 0) require_valid(store, false);
  return 0;
}
