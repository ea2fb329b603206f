// Tests for the one stream name rule (zrec/dataset.h): what may name a
// stream of a root, and the reason given for each name that may not.
#include <string>

#include <doctest/doctest.h>

#include "zrec/dataset.h"

namespace zrec {

TEST_SUITE("stream_name") {
  TEST_CASE("WebDataset extensions name streams") {
    for (const char* name : {"jpg", "cls", "seg.png", "json.gz", "tar_gz", "a-b", "X9", "1", "input_ids.npy"})
      CHECK_MESSAGE(stream_name_problem(name).empty(), name);
    CHECK(stream_name_problem(std::string(128, 'a')).empty());
  }

  TEST_CASE("each refused name says why") {
    CHECK(stream_name_problem("") == "it is empty");
    CHECK(stream_name_problem(std::string(129, 'a')) == "it is 129 bytes long");
    CHECK(stream_name_problem("meta.zr") == "it is a store file name (ends in '.zr')");
    CHECK(stream_name_problem("dict.zr") == "it is a store file name (ends in '.zr')");
    CHECK(stream_name_problem("data_0.zr") == "it is a store file name (ends in '.zr')");
    CHECK(stream_name_problem(".") == "it is hidden (starts with '.')");
    CHECK(stream_name_problem("..") == "it is hidden (starts with '.')");
    CHECK(stream_name_problem(".hid") == "it is hidden (starts with '.')");
    CHECK(stream_name_problem("jpg.") == "it ends with '.'");
    CHECK(stream_name_problem("a..b") == "it holds an empty word ('..')");
    CHECK(stream_name_problem("-rf") == "it starts with '-'");
    CHECK(stream_name_problem("jpg.zrec-tmp-abcdef") ==
          "it has the word 'zrec-tmp-abcdef' (the pattern of zrec's own and temporary files)");
    CHECK(stream_name_problem("zrec-build") ==
          "it has the word 'zrec-build' (the pattern of zrec's own and temporary files)");
    CHECK(stream_name_problem("x.tmp-123456") ==
          "it has the word 'tmp-123456' (the pattern of zrec's own and temporary files)");
    CHECK(stream_name_problem("a\nb") == "it holds the byte 0x0a");
    CHECK(stream_name_problem("\x1b[2J") == "it holds the byte 0x1b");
    CHECK(stream_name_problem("caf\xc3\xa9") == "it holds the byte 0xc3");
    CHECK(stream_name_problem("a b") == "it holds a space");
    CHECK(stream_name_problem("a/b") == "it holds the character '/'");
    CHECK(stream_name_problem("p|e") == "it holds the character '|'");
    CHECK(stream_name_problem("%j") == "it holds the character '%'");
    CHECK(stream_name_problem(std::string("a\0b", 3)) == "it holds the byte 0x00");
  }

  TEST_CASE("a root holding a store that breaks the rule is refused, naming it") {
    CHECK(check_root_streams("ds", {"cls", "jpg"}).is_ok());
    const Status s = check_root_streams("ds", {"cls", "meta.zr", ".x"});
    CHECK(s.code() == StatusCode::kInvalidArgument);
    // Built in steps: gcc 12 reads the one-expression concatenation, inlined into a
    // unity batch, as a memcpy out of bounds (-Warray-bounds, a false positive).
    std::string want =
        "'ds' holds the store 'meta.zr', which cannot be a stream: it is a store file name (ends in "
        "'.zr') (";
    want += kStreamNameRule;
    want += "); move it out of the root";
    CHECK(s.message() == want);
  }
}

}  // namespace zrec
