// Tests for the lane-count rule that --threads and ZREC_THREADS share (cli/thread_count.h).
#include "cli/options/thread_count.h"

#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

namespace zrec::cli {

TEST_SUITE("thread_count") {
  TEST_CASE("thread_count_problem accepts whole numbers from 1 to 1024 only") {
    for (const char* ok : {"1", "4", "1024", "0004"}) CHECK_MESSAGE(thread_count_problem(ok).empty(), ok);
    CHECK(thread_count_problem("0") == "'0' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("1025") == "'1025' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("-1") == "'-1' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("abc") == "'abc' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("") == "'' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("+4") == "'+4' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("4 ") == "'4 ' is not a whole number from 1 to 1024");
    CHECK(thread_count_problem("2.5") == "'2.5' is not a whole number from 1 to 1024");
    // 2^64 + 4 would wrap to 4 in a careless parse.
    CHECK(thread_count_problem("18446744073709551620") ==
          "'18446744073709551620' is not a whole number from 1 to 1024");
  }

  TEST_CASE("threads_from_environment: unset or empty is 0, a valid value is used, others name the variable") {
    const char* saved = std::getenv("ZREC_THREADS");
    const std::string keep = saved ? saved : "";
    ::unsetenv("ZREC_THREADS");
    CHECK(threads_from_environment().value() == 0);
    ::setenv("ZREC_THREADS", "", 1);
    CHECK(threads_from_environment().value() == 0);
    ::setenv("ZREC_THREADS", "12", 1);
    CHECK(threads_from_environment().value() == 12);
    ::setenv("ZREC_THREADS", "0", 1);
    Result<size_t> bad = threads_from_environment();
    REQUIRE(!bad.is_ok());
    CHECK(bad.status().code() == StatusCode::kInvalidArgument);
    CHECK(bad.status().message() == "ZREC_THREADS: '0' is not a whole number from 1 to 1024");
    if (saved) ::setenv("ZREC_THREADS", keep.c_str(), 1);
    else ::unsetenv("ZREC_THREADS");
  }
}

}  // namespace zrec::cli
