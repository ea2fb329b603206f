// Tests for the append window (apps/cli/import/record_window): bytes read into
// input_space() and cut into records stay exact across flushes, a record longer than
// the budget grows the window alone, and memory returns to the budget after it; each
// with and without writing behind (a write thread appends a full window while the next
// is filled), which also keeps the order of records handed on from the caller's memory
// and reports a batch's error at the next call that waits for it.
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

// A new Ragged '|u1' store at `path` and its writer (of the default lanes).
std::unique_ptr<StoreWriter> new_store_writer(const std::string& path, Codec codec, uint32_t shards) {
  REQUIRE_OK(create_store(path, bytes_store(codec, shards)));
  auto writer = StoreWriter::open(path);
  REQUIRE_OK(writer);
  return std::move(writer).value();
}

// Runs body(behind, path, writer, window) twice, on a window of 64 KiB written inline
// and one written behind, each over a new store of `codec` and `shards` in `dir`.
template <class Body>
void in_both_modes(const test::TempDir& dir, Codec codec, uint32_t shards, Body body) {
  for (bool behind : {false, true}) {
    CAPTURE(behind);
    const std::string path = dir / (behind ? "behind" : "inline");
    auto writer = new_store_writer(path, codec, shards);
    RecordWindow window(*writer, 1 << 16, behind);
    body(behind, path, *writer, window);
  }
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
    for (bool behind : {false, true}) {
      CAPTURE(behind);
      {
        auto writer = StoreWriter::open(path);
        REQUIRE_OK(writer);
        RecordWindow window(**writer, 4096, behind);  // a few lines per window: many flushes
        for (size_t chunk : {size_t{1000}, size_t{7}, size_t{1} << 20}) {
          CAPTURE(chunk);
          feed_lines(window, input, chunk);
        }
        CHECK(window.records_appended() == 3 * want.size());
        REQUIRE_OK((*writer)->close());
      }
      const auto got = read_all(path);
      REQUIRE(got.size() == (behind ? 6 : 3) * want.size());
      for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == want[i % want.size()]);
    }
  }

  TEST_CASE("a record longer than the budget grows the window alone, kept records stay") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kZstd, 2)));
    const std::string longline(300000, 'L');
    const std::string input = "short\n" + longline + "\nafter\n\ntail";
    for (bool behind : {false, true}) {
      CAPTURE(behind);
      auto writer = StoreWriter::open(path);
      REQUIRE_OK(writer);
      RecordWindow window(**writer, 65536, behind);
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
    CHECK(read_all(path) ==
          std::vector<std::string>{"short", longline, "after", "tail", "short", longline, "after", "tail"});
  }

  TEST_CASE(
      "a window of a raw store or of one lane is handed on at kSmallWindowBytes, one of more lanes at its budget") {
    test::TempDir dir;
    for (bool behind : {false, true})
      for (Codec codec : {Codec::kRaw, Codec::kZstd})
        for (size_t lanes : {1, 2}) {
          CAPTURE(behind);
          CAPTURE(to_string(codec));
          CAPTURE(lanes);
          const std::string path = dir / (std::string(to_string(codec)) + std::to_string(lanes) + (behind ? "b" : ""));
          REQUIRE_OK(create_store(path, bytes_store(codec, 2)));
          auto writer = StoreWriter::open(path, {}, {.lanes = std::make_shared<Lanes>(lanes)});
          REQUIRE_OK(writer);
          RecordWindow window(**writer, uint64_t{64} << 20, behind);
          // Writing behind, each of the two buffers gets half the budget (still more than
          // a small window's cap).
          const bool small = codec == Codec::kRaw || lanes == 1;
          CHECK(RecordWindow::small_windows(**writer) == small);
          CHECK(window.buffer_budget() ==
                (small ? RecordWindow::kSmallWindowBytes : (uint64_t{64} << 20) / (behind ? 2 : 1)));
          const uint64_t record = RecordWindow::kSmallWindowBytes / 4;
          for (uint64_t i = 0; i < 6; ++i) {
            auto space = window.input_space(record);
            REQUIRE_OK(space);
            std::memset(space.value().data(), static_cast<int>('a' + i), record);
            window.input_written(record);
            REQUIRE_OK(window.cut(record, 0, true, &record));
          }
          // Small: the fifth record's room handed on the first four; else all six wait.
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
    RecordWindow window(**writer, 1 << 16, false);
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

  TEST_CASE("records handed on from the caller's memory keep their place among the window's") {
    test::TempDir dir;
    in_both_modes(dir, Codec::kZstd, 3,
                  [&](bool behind, const std::string& path, StoreWriter& writer, RecordWindow& window) {
                    CHECK(window.writes_behind() == behind);
                    std::vector<std::string> want;
                    // Two batches of the caller's, alternated as append-lmdb does: one is written
                    // while the other is filled, and its memory is reused only after wait().
                    std::vector<std::string> batch_bytes[2];
                    std::vector<uint64_t> batch_dims[2];
                    std::vector<RecordRef> batch_refs[2];
                    for (int round = 0; round < 40; ++round) {
                      // Some records through the window...
                      for (int k = 0; k < round % 3; ++k) {
                        want.push_back("window " + std::to_string(round) + "." + std::to_string(k) +
                                       std::string(round * 50, 'w'));
                        auto n = window.reserve(1, want.back().size());
                        REQUIRE_OK(n);
                        std::memcpy(window.next_payload(), want.back().data(), want.back().size());
                        const uint64_t dims = want.back().size();
                        window.add(dims, &dims);
                      }
                      // ...then a batch of the caller's.
                      REQUIRE_OK(window.wait());
                      const int b = round % 2;
                      batch_bytes[b].clear();
                      batch_dims[b].clear();
                      batch_refs[b].clear();
                      batch_bytes[b].reserve(8);
                      batch_dims[b].reserve(8);
                      for (int k = 0; k < 1 + round % 5; ++k) {
                        batch_bytes[b].push_back("caller " + std::to_string(round) + "." + std::to_string(k) +
                                                 std::string(round * 30, 'c'));
                        want.push_back(batch_bytes[b].back());
                      }
                      for (const std::string& r : batch_bytes[b]) {
                        batch_dims[b].push_back(r.size());
                        batch_refs[b].push_back(
                            RecordRef{reinterpret_cast<const uint8_t*>(r.data()), r.size(), &batch_dims[b].back()});
                      }
                      REQUIRE_OK(window.append_behind(batch_refs[b]));
                    }
                    REQUIRE_OK(window.flush());
                    REQUIRE_OK(writer.close());
                    CHECK(read_all(path) == want);
                  });
  }

  TEST_CASE("packed batches keep their place among the window's, their tables written by the next call") {
    test::TempDir dir;
    in_both_modes(dir, Codec::kRaw, 3, [&](bool, const std::string& path, StoreWriter& writer, RecordWindow& window) {
      std::vector<std::string> want;
      // Two packed batches alternated as append-stream's mapped lines are: one is packed
      // while the payload of the other is written, and its table after that.
      PackedRecords packed[2];
      std::vector<std::string> bytes;
      std::vector<uint64_t> dims;
      std::vector<RecordRef> refs;
      for (int round = 0; round < 40; ++round) {
        for (int k = 0; k < round % 3; ++k) {
          want.push_back("window " + std::to_string(round) + "." + std::to_string(k));
          auto n = window.reserve(1, want.back().size());
          REQUIRE_OK(n);
          std::memcpy(window.next_payload(), want.back().data(), want.back().size());
          const uint64_t d = want.back().size();
          window.add(d, &d);
        }
        bytes.clear();
        dims.clear();
        refs.clear();
        for (int k = 0; k < 1 + round % 5; ++k)
          bytes.push_back("packed " + std::to_string(round) + "." + std::to_string(k));
        for (const std::string& r : bytes) dims.push_back(r.size());
        for (size_t k = 0; k < bytes.size(); ++k)
          refs.push_back(RecordRef{reinterpret_cast<const uint8_t*>(bytes[k].data()), bytes[k].size(), &dims[k]});
        // The window's records are handed on first: the batch's IDs follow them.
        const uint64_t first_id = want.size();
        want.insert(want.end(), bytes.begin(), bytes.end());
        REQUIRE_OK(writer.pack(refs, first_id, packed[round % 2]));
        REQUIRE_OK(window.append_behind(packed[round % 2]));
        if (round == 20) {
          // A checkpoint: everything handed on is in the writer, tables included.
          REQUIRE_OK(window.flush());
          CHECK(writer.length() == want.size());
          REQUIRE_OK(writer.publish());
        }
      }
      REQUIRE_OK(window.flush());
      CHECK(writer.length() == want.size());
      REQUIRE_OK(writer.close());
      CHECK(read_all(path) == want);
    });
  }

  TEST_CASE("a batch's error is reported by the next call that hands on or waits, and nothing after it is appended") {
    test::TempDir dir;
    in_both_modes(dir, Codec::kRaw, 1, [&](bool behind, const std::string&, StoreWriter& writer, RecordWindow& window) {
      const uint64_t budget = window.buffer_budget();
      const auto add = [&](uint64_t bytes) -> Status {
        ZREC_ASSIGN_OR_RETURN(uint64_t n, window.reserve(1, bytes));
        CHECK(n == 1);
        std::memset(window.next_payload(), 'x', bytes);
        window.add(bytes, &bytes);
        return Status::ok();
      };
      const std::string empty = "record 1 of this batch is empty (records must be nonempty)";
      REQUIRE_OK(add(100));
      REQUIRE_OK(add(0));  // the writer refuses an empty record
      // The next record does not fit: the first two are handed on. Inline, the append
      // fails there; written behind, the hand-off succeeds and the error waits.
      Status handed = add(budget - 50);
      if (!behind) {
        CHECK(handed.message() == empty);
      } else {
        REQUIRE_OK(handed);
        CHECK(window.flush().message() == empty);
        CHECK(window.wait().is_ok());  // reported once
      }
      CHECK(writer.length() == 0);
      writer.abort();
    });
  }
}

}  // namespace zrec::cli
