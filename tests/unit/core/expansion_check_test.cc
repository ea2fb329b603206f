// Tests for apps/cli/import/expansion_check: the first window's codec warning.
#include "cli/import/expansion_check.h"

#include <doctest/doctest.h>

#include "testutil.h"

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

TEST_CASE("the check judges the first windows once they hold 16 records, and warns once") {
  test::TempDir dir;
  const std::string path = dir / "labels";
  CreateOptions c;
  c.schema.dtype = parse_dtype("<i8").value();
  c.schema.ndim = 0;
  c.schema.item_shape = std::vector<uint64_t>{};
  REQUIRE_OK(create_store(path, c));
  std::vector<std::string> warnings;
  const auto count_into = [&](ExpansionCheck& check, StoreWriter& w, size_t n) {
    const int64_t label = 7;
    const std::vector<RecordRef> refs(n, RecordRef{reinterpret_cast<const uint8_t*>(&label), sizeof label, nullptr});
    REQUIRE_OK(check.append(w, refs));
    check.report();
  };
  auto w = StoreWriter::open(path);
  REQUIRE_OK(w);
  {
    // A one-record append (as a script appending one label per run): no warning.
    ExpansionCheck check("labels", false, [&](const std::string& m) { warnings.push_back(m); });
    count_into(check, *w.value(), 1);
    CHECK(warnings.empty());
  }
  {
    // Windows of 5: judged at the fourth (20 records), once.
    ExpansionCheck check("labels", false, [&](const std::string& m) { warnings.push_back(m); });
    for (int k = 0; k < 3; ++k) count_into(check, *w.value(), 5);
    CHECK(warnings.empty());
    count_into(check, *w.value(), 5);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("in the first 20 records") != std::string::npos);
    count_into(check, *w.value(), 50);
    CHECK(warnings.size() == 1);
  }
  w.value()->abort();
}

}  // namespace
}  // namespace zrec::cli
