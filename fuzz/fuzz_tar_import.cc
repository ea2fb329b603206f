// libFuzzer target: the tar import path, bytes -> libarchive (plain, gzip, zstd, xz,
// bzip2 tars: detected by content) -> WebDataset grouping -> named streams, that is,
// `zrec append-tar` with a 1 MiB window per stream. The first byte picks the options
// (--parse cls=ints, --ext, --skip-incomplete, --keys), the rest is the tar. Whatever
// the member names, sizes and contents claim: no crash, no sanitizer report, memory
// within libFuzzer's limit (scripts/fuzz.sh), and either an error or a root whose
// streams follow the stream name rule and verify (equal lengths).
#include <string>

#include "fuzz_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec::fuzz;
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string tar = fresh("input.tar"), root = fresh("root"), keys = fresh("keys");
  write_file(tar, data + 1, size - 1);
  const std::string parse = mode & 1 ? "--parse=cls=ints" : "--parse=cls=floats";
  const std::string ext = mode & 2 ? "--ext=jpg,cls" : "--skip-incomplete";
  const std::string keys_option = "--keys=" + keys;
  // New streams raw with one data file: the import path, not the codec, is under test.
  int rc;
  if (mode & 4)
    rc = zrec_cli(
        {"append-tar", "--codec", "raw", "--shards", "1", "--window-mib", "1", parse, ext, keys_option, root, tar});
  else rc = zrec_cli({"append-tar", "--codec", "raw", "--shards", "1", "--window-mib", "1", ext, root, tar});
  if (rc == 0) require_valid(root, true);
  return 0;
}
