// Tests for GlobalOptions::lanes (cli/commands.h): each Work gets its own budget on
// every call, and one executor serves both where the budgets agree.
#include <doctest/doctest.h>

#include "zrec/lanes.h"

#include "cli/app/command.h"

namespace zrec::cli {

TEST_SUITE("global options") {
  TEST_CASE("lanes(work) gives each work its budget, whichever is asked first") {
    for (Work first : {Work::kRead, Work::kWrite}) {
      GlobalOptions g;
      const Work second = first == Work::kRead ? Work::kWrite : Work::kRead;
      auto a = g.lanes(first);
      auto b = g.lanes(second);
      CHECK(g.lanes(Work::kRead)->count() == read_lane_budget());
      CHECK(g.lanes(Work::kWrite)->count() == write_lane_budget());
      CHECK(g.lanes(first) == a);  // the same executor on every later call
      CHECK(g.lanes(second) == b);
      CHECK((a == b) == (read_lane_budget() == write_lane_budget()));
    }
  }

  TEST_CASE("--threads gives reads and writes one executor") {
    GlobalOptions g;
    g.threads = 3;
    auto w = g.lanes(Work::kWrite);
    CHECK(w->count() == 3);
    CHECK(g.lanes(Work::kRead) == w);
  }
}

}  // namespace zrec::cli
