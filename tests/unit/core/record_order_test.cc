// Tests for apps/cli/formats/record_order: the one order cat, the tar export and view
// read a selection in (as selected, shuffled, sampled with or without replacement).
#include "cli/formats/record_order.h"

#include <algorithm>
#include <set>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli {
namespace {

std::vector<uint64_t> ids_of(const RecordOrder& order) {
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < order.total(); ++i) ids.push_back(order.id_at(i));
  return ids;
}

TEST_CASE("a record order walks the selection, shuffles it, or draws from it") {
  const std::vector<IdRun> runs{{.start = 10, .step = 2, .count = 50}};  // 10, 12, ..., 108
  const std::vector<uint64_t> no_list;
  const SelectionIndex selection(runs, no_list);
  auto plain = RecordOrder::of(selection, {});
  REQUIRE(plain.is_ok());
  CHECK(plain->total() == 50);
  CHECK(plain->id_at(0) == 10);
  CHECK(plain->id_at(49) == 108);

  auto shuffled = RecordOrder::of(selection, {.shuffle = true, .seed = 7});
  REQUIRE(shuffled.is_ok());
  std::vector<uint64_t> ids = ids_of(*shuffled), sorted = ids_of(*plain);
  CHECK(ids != sorted);
  std::sort(ids.begin(), ids.end());
  CHECK(ids == sorted);  // every selected ID once

  // Without replacement: the first N of the shuffle's order, as the tar export and cat
  // --distinct write them.
  auto distinct = RecordOrder::of(selection, {.sample = 5, .distinct = true, .seed = 7});
  REQUIRE(distinct.is_ok());
  const std::vector<uint64_t> order = ids_of(*shuffled);
  const std::vector<uint64_t> first5(order.begin(), order.begin() + 5);
  CHECK(ids_of(*distinct) == first5);

  // With replacement: N draws of selected IDs, the same for the same seed.
  auto drawn = RecordOrder::of(selection, {.sample = 200, .seed = 3});
  REQUIRE(drawn.is_ok());
  CHECK(drawn->total() == 200);
  const std::vector<uint64_t> draws = ids_of(*drawn);
  CHECK(draws == ids_of(RecordOrder::of(selection, {.sample = 200, .seed = 3}).value()));
  CHECK(std::set<uint64_t>(draws.begin(), draws.end()).size() < 200);  // 200 draws of 50: repeats
  for (const uint64_t id : draws) CHECK((id >= 10 && id <= 108 && id % 2 == 0));
}

TEST_CASE("a record order refuses a sample it cannot draw, naming the option") {
  const std::vector<IdRun> none;
  const std::vector<IdRun> three{{.start = 0, .step = 1, .count = 3}};
  const std::vector<uint64_t> no_list;
  const SelectionIndex empty(none, no_list), small(three, no_list);
  CHECK(RecordOrder::of(empty, {.sample = 1}).status().message() == "--sample: the selection is empty");
  CHECK(RecordOrder::of(empty, {.sample = 1, .option = "sample"}).status().message() ==
        "sample: the selection is empty");
  CHECK(RecordOrder::of(small, {.sample = 4, .distinct = true, .unit = "samples"}).status().message() ==
        "--sample 4 --distinct: the selection holds only 3 samples");
  CHECK(RecordOrder::of(empty, {.sample = 0}).is_ok());
}

}  // namespace
}  // namespace zrec::cli
