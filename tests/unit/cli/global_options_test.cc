// Tests for GlobalOptions::context (cli/app/command.h): each Work gets its own lane
// budget on every call, one executor serves both where the budgets agree, and the
// Context carries --wait and the interrupt token.
#include <doctest/doctest.h>

#include "zrec/lanes.h"

#include "cli/app/command.h"
#include "cli/os/interrupt.h"

namespace zrec::cli {

TEST_SUITE("global options") {
  TEST_CASE("context(work) gives each work its budget, whichever is asked first") {
    for (Work first : {Work::kRead, Work::kWrite}) {
      GlobalOptions g;
      const Work second = first == Work::kRead ? Work::kWrite : Work::kRead;
      auto a = g.context(first).lanes;
      auto b = g.context(second).lanes;
      CHECK(g.context(Work::kRead).lanes->count() == read_lane_budget());
      CHECK(g.context(Work::kWrite).lanes->count() == write_lane_budget());
      CHECK(g.context(first).lanes == a);  // the same executor on every later call
      CHECK(g.context(second).lanes == b);
      CHECK((a == b) == (read_lane_budget() == write_lane_budget()));
    }
  }

  TEST_CASE("--threads gives reads and writes one executor") {
    GlobalOptions g;
    g.threads = 3;
    auto w = g.context(Work::kWrite).lanes;
    CHECK(w->count() == 3);
    CHECK(g.context(Work::kRead).lanes == w);
  }

  TEST_CASE("the context carries --wait, its deadline and the interrupt token") {
    GlobalOptions g;
    g.wait = true;
    g.wait_deadline = std::chrono::steady_clock::now();
    g.wait_timeout_text = "1 s (--wait=1)";
    const Context ctx = g.context(Work::kRead);
    CHECK(ctx.wait.block);
    CHECK(ctx.wait.deadline == g.wait_deadline);
    CHECK(ctx.wait.timeout_text == "1 s (--wait=1)");
    CHECK(static_cast<bool>(ctx.wait.probe));
    CHECK(ctx.control.cancel.flag == interrupt_token().flag);
    CHECK(ctx.control.cancel.wake_fd == interrupt_token().wake_fd);
    CHECK(static_cast<bool>(ctx.warn));
    CHECK(!ctx.snapshot_if_busy);
  }
}

}  // namespace zrec::cli
