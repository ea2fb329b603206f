// Tests for the append window's streamed input (apps/cli/import/record_window): bytes read
// into input_space() and cut into records stay exact across flushes, a record longer
// than the budget grows the window alone, and memory returns to the budget after it.
#include "cli/import/record_window.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "zrec/lanes.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "testutil.h"

namespace zrec::cli {
namespace {

// A Ragged '|u1' store with ndim 1, as append-stream writes.
CreateOptions bytes_store(Codec codec, uint32_t shards) {
  CreateOptions o;
  o.schema.dtype = parse_dtype("|u1").value();
  o.schema.ndim = 1;
  o.codec = codec;
  o.data_shards = shards;
  return o;
}

std::vector<std::string> read_all(const std::string& path) {
  auto store = Store::open(path);
  REQUIRE_OK(store);
  std::vector<uint64_t> ids((*store)->length());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<std::string> out;
  REQUIRE_OK((*store)->scan(ids, 1 << 20, [&](const Window& w) {
    for (size_t k = 0; k < w.ids.size(); ++k)
      out.emplace_back(reinterpret_cast<const char*>(w.data + w.offsets[k] + 8), w.offsets[k + 1] - w.offsets[k] - 8);
    return Status::ok();
  }));
  return out;
}

// Feeds `input` through the streamed-input path in reads of at most `chunk` bytes,
// cutting at '\n' (an unterminated last line counts).
void feed_lines(RecordWindow& window, const std::string& input, size_t chunk) {
  size_t at = 0, scanned = 0;
  uint64_t dims = 0;
  while (at < input.size()) {
    auto space = window.input_space(1);
    REQUIRE_OK(space);
    const size_t n = std::min({chunk, input.size() - at, space.value().size()});
    std::memcpy(space.value().data(), input.data() + at, n);
    window.input_written(n);
    at += n;
    for (;;) {
      auto p = window.pending();
      const void* hit = std::memchr(p.data() + scanned, '\n', p.size() - scanned);
      if (hit == nullptr) {
        scanned = p.size();
        break;
      }
      dims = static_cast<const uint8_t*>(hit) - p.data();
      REQUIRE_OK(window.cut(dims, 1, true, &dims));
      scanned = 0;
    }
  }
  if (!window.pending().empty()) {
    dims = window.pending().size();
    REQUIRE_OK(window.cut(dims, 0, true, &dims));
  }
  REQUIRE_OK(window.flush());
}

}  // namespace

TEST_SUITE("record_window") {
  TEST_CASE("streamed lines cut in place round-trip across many small windows") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kRaw, 3)));
    std::string input;
    std::vector<std::string> want;
    for (int i = 0; i < 5000; ++i) {
      want.push_back(std::string(1 + (i * 37) % 300, static_cast<char>('a' + i % 26)) + std::to_string(i));
      input += want.back() + "\n";
    }
    want.push_back("unterminated");
    input += want.back();
    {
      auto writer = StoreWriter::open(path);
      REQUIRE_OK(writer);
      RecordWindow window(**writer, 4096);  // a few lines per window: many flushes
      for (size_t chunk : {size_t{1000}, size_t{7}, size_t{1} << 20}) {
        CAPTURE(chunk);
        feed_lines(window, input, chunk);
      }
      CHECK(window.records_appended() == 3 * want.size());
      REQUIRE_OK((*writer)->close());
    }
    const auto got = read_all(path);
    REQUIRE(got.size() == 3 * want.size());
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == want[i % want.size()]);
  }

  TEST_CASE("a record longer than the budget grows the window alone, kept records stay") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kZstd, 2)));
    const std::string longline(300000, 'L');
    const std::string input = "short\n" + longline + "\nafter\n\ntail";
    {
      auto writer = StoreWriter::open(path);
      REQUIRE_OK(writer);
      RecordWindow window(**writer, 65536);
      // Cut by hand: drop the empty line (a gap without a record).
      size_t at = 0;
      uint64_t dims = 0;
      while (at < input.size()) {
        auto space = window.input_space(1 << 12);
        REQUIRE_OK(space);
        const size_t n = std::min(space.value().size(), input.size() - at);
        std::memcpy(space.value().data(), input.data() + at, n);
        window.input_written(n);
        at += n;
        for (;;) {
          auto p = window.pending();
          const void* hit = std::memchr(p.data(), '\n', p.size());
          if (hit == nullptr) break;
          dims = static_cast<const uint8_t*>(hit) - p.data();
          REQUIRE_OK(window.cut(dims, 1, dims > 0, &dims));
        }
      }
      dims = window.pending().size();
      REQUIRE_OK(window.cut(dims, 0, true, &dims));
      REQUIRE_OK(window.flush());
      CHECK(window.records_appended() == 4);
      CHECK(window.bytes_appended() == 5 + longline.size() + 5 + 4);
      REQUIRE_OK((*writer)->close());
    }
    CHECK(read_all(path) == std::vector<std::string>{"short", longline, "after", "tail"});
  }

  TEST_CASE("a window of a raw store or of one lane is flushed at kSmallWindowBytes, one of more lanes at its budget") {
    test::TempDir dir;
    for (Codec codec : {Codec::kRaw, Codec::kZstd})
      for (size_t lanes : {1, 2}) {
        CAPTURE(to_string(codec));
        CAPTURE(lanes);
        const std::string path = dir / (std::string(to_string(codec)) + std::to_string(lanes));
        REQUIRE_OK(create_store(path, bytes_store(codec, 2)));
        WriterOptions options;
        options.lanes = std::make_shared<Lanes>(lanes);
        auto writer = StoreWriter::open(path, options);
        REQUIRE_OK(writer);
        RecordWindow window(**writer, uint64_t{64} << 20);
        const bool small = codec == Codec::kRaw || lanes == 1;
        CHECK(RecordWindow::small_windows(**writer) == small);
        CHECK(window.buffer_budget() == (small ? RecordWindow::kSmallWindowBytes : uint64_t{64} << 20));
        const uint64_t record = RecordWindow::kSmallWindowBytes / 4;
        for (uint64_t i = 0; i < 6; ++i) {
          auto space = window.input_space(record);
          REQUIRE_OK(space);
          std::memset(space.value().data(), static_cast<int>('a' + i), record);
          window.input_written(record);
          REQUIRE_OK(window.cut(record, 0, true, &record));
        }
        // Small: the fifth record's room flushed the first four; else all six wait.
        CHECK(window.records_appended() == (small ? 4u : 0u));
        CHECK(window.records_in_window() == (small ? 2u : 6u));
        REQUIRE_OK(window.flush());
        REQUIRE_OK((*writer)->close());
        const auto got = read_all(path);
        REQUIRE(got.size() == 6);
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == std::string(record, static_cast<char>('a' + i)));
      }
  }

  TEST_CASE("a window holding only dropped bytes does not grow without bound") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kRaw, 1)));
    auto writer = StoreWriter::open(path);
    REQUIRE_OK(writer);
    RecordWindow window(**writer, 1 << 16);
    for (int i = 0; i < 1000; ++i) {
      auto space = window.input_space(1 << 10);
      REQUIRE_OK(space);
      CHECK(space.value().size() <= (1 << 16));
      window.input_written(1 << 10);
      REQUIRE_OK(window.cut(0, 1 << 10, false, nullptr));  // e.g. --skip-first
    }
    CHECK(window.records_appended() == 0);
    REQUIRE_OK((*writer)->close());
  }
}

}  // namespace zrec::cli
