// Tests for apps/cli/import/expansion_check: the first window's codec warning.
#include "cli/import/expansion_check.h"

#include <doctest/doctest.h>

namespace zrec::cli {
namespace {

TEST_CASE("expansion_warning names the ratio and the codec that would store less") {
  // 100 <i8 scalars: 800 bytes read, 1700 stored (a 17-byte frame each).
  CHECK(expansion_warning("labels/", Codec::kZstd, 100, 800, 800, 1700, true) ==
        "'labels/': zstd stored 2.12x the bytes it read in the first 100 records; --codec raw would store them "
        "smaller");
  CHECK(expansion_warning("labels/", Codec::kZstdDict, 1, 8, 8, 17, false) ==
        "'labels/': zstd_dict stored 2.12x the bytes it read in the first 1 record; a raw store would hold them "
        "smaller (zrec recompress --codec raw makes one)");
  // No warning: raw (nothing better), records that shrank or broke even, nothing read,
  // and Ragged records whose raw store (shape prefixes included) would be no smaller.
  CHECK(expansion_warning("s/", Codec::kRaw, 100, 800, 800, 1700, true).empty());
  CHECK(expansion_warning("s/", Codec::kZstd, 100, 800, 800, 800, true).empty());
  CHECK(expansion_warning("s/", Codec::kZstd, 0, 0, 0, 0, true).empty());
  CHECK(expansion_warning("s/", Codec::kZstd, 10, 100, 180, 170, true).empty());
  // Names from data are escaped.
  CHECK(expansion_warning("a\nb", Codec::kZstd, 1, 1, 1, 10, true).rfind("'a\\x0ab': ", 0) == 0);
}

}  // namespace
}  // namespace zrec::cli
