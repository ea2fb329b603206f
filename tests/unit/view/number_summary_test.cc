// Tests for summarize_numbers(): NumPy's printout (summarised past 1000 elements, 3 at
// each end of every axis), min/max/mean and sparklines.
#include "cli/view/number_summary.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli::view {

namespace {
const DType kI4{'<', DTypeKind::kInt, 4, ""};
const DType kF8{'<', DTypeKind::kFloat, 8, ""};

template <typename T>
NumberSummary summary(const DType& dtype, std::vector<uint64_t> dims, const std::vector<T>& values) {
  return summarize_numbers(dtype, dims, reinterpret_cast<const uint8_t*>(values.data()), 4, 1 << 20);
}
}  // namespace

TEST_SUITE("number_summary") {
  TEST_CASE("up to 1000 elements print whole - past that, 3 at each end") {
    std::vector<int32_t> a(1000);
    std::iota(a.begin(), a.end(), 0);
    const NumberSummary whole = summary(kI4, {1000}, a);
    CHECK((!whole.summarised && whole.text.starts_with("[0 1 2 3 ") && whole.text.ends_with(" 998 999]")));
    a.push_back(1000);
    const NumberSummary cut = summary(kI4, {1001}, a);
    CHECK((cut.summarised && cut.text == "[0 1 2 ... 998 999 1000]"));
    CHECK((*cut.min == 0 && *cut.max == 1000 && *cut.mean == 500 && cut.elements == 1001));
    CHECK(cut.sparkline.size() == 4);
  }

  TEST_CASE("a summarised 2-D array cuts rows and columns, as NumPy") {
    std::vector<int32_t> a(40 * 40);
    std::iota(a.begin(), a.end(), 0);
    const NumberSummary s = summary(kI4, {40, 40}, a);
    CHECK(s.text ==
          "[[0 1 2 ... 37 38 39]\n [40 41 42 ... 77 78 79]\n [80 81 82 ... 117 118 119]\n ...\n"
          " [1480 1481 1482 ... 1517 1518 1519]\n [1520 1521 1522 ... 1557 1558 1559]\n"
          " [1560 1561 1562 ... 1597 1598 1599]]");
    CHECK(s.sparkline.empty());  // 2-D: no sparkline
  }

  TEST_CASE("NaNs are counted, not averaged - a sparkline point of NaNs only is empty") {
    const std::vector<double> v = {1.0, NAN, NAN, NAN, 3.0, 5.0, NAN, 7.0};
    const NumberSummary s = summary(kF8, {8}, v);
    CHECK((s.nan_count == 4 && *s.min == 1.0 && *s.max == 7.0 && *s.mean == 4.0));
    REQUIRE(s.sparkline.size() == 4);
    CHECK((*s.sparkline[0] == 1.0 && !s.sparkline[1] && *s.sparkline[2] == 4.0 && *s.sparkline[3] == 7.0));
    CHECK(s.text == "[1.0 nan nan nan 3.0 5.0 nan 7.0]");
  }

  TEST_CASE("a scalar, an empty record and text cut at max_text_bytes") {
    const std::vector<int32_t> one = {-7};
    CHECK(summary(kI4, {}, one).text == "-7");
    CHECK(summarize_numbers(kI4, std::vector<uint64_t>{0}, nullptr, 4, 100).text == "[]");
    std::vector<int32_t> a(100, 12345);
    const NumberSummary s =
        summarize_numbers(kI4, std::vector<uint64_t>{100}, reinterpret_cast<const uint8_t*>(a.data()), 4, 20);
    CHECK((s.text.size() == 23 && s.text.ends_with("...")));
  }
}

}  // namespace zrec::cli::view
