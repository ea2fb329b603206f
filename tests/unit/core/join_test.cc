// Joining by placement (include/zrec/join.h): the layout (bases, offsets, shard
// rotation, empty and tiny parts), byte-identity with today's frame-copy concat, the
// steps (plan, place in any order and twice, interrupted placements, publish crashed
// after its page write, discard, abandoned temporaries), the checks a placement makes,
// hard-linked first parts, and the plan file's encoding.
#include "zrec/join.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "zrec/store.h"
#include "zrec/store_writer.h"
#include "zrec/transfer.h"
#include "zrec/verify.h"

#include "store/join_plan_file.h"
#include "testutil.h"
#include "zrec_support/file.h"

using namespace zrec;

namespace {

Schema ragged_u2() {
  Schema s;
  s.dtype = parse_dtype("<u2").value();
  s.ndim = 1;
  return s;
}

Schema dense_u1() {
  Schema s;
  s.dtype = parse_dtype("|u1").value();
  s.ndim = 1;
  s.item_shape = std::vector<uint64_t>{24};
  return s;
}

// Records first .. first+n-1: Ragged of 1..40 elements, or Dense rows.
void build(const std::string& path, const Schema& schema, Codec codec, uint32_t shards, uint64_t first, size_t n,
           bool checksum = false) {
  CreateOptions o{.schema = schema, .codec = codec, .data_shards = shards, .dictionary = {}, .checksum = checksum};
  if (codec == Codec::kZstdDict) o.dictionary = test::test_dictionary();
  REQUIRE_OK(create_store(path, o));
  // One lane: records land in ID order in every data file, as concat lays them out.
  auto w = StoreWriter::open(path, {}, {.lanes = std::make_shared<Lanes>(1)});
  REQUIRE_OK(w);
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<uint64_t> dims(n);
  std::vector<RecordRef> refs;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t id = first + k;
    const size_t bytes = schema.is_dense() ? 24 : 2 * (1 + (id * 7) % 40);
    payloads.push_back(test::record_bytes(id, bytes));
    dims[k] = bytes / 2;
  }
  for (size_t k = 0; k < n; ++k)
    refs.push_back({payloads[k].data(), payloads[k].size(), schema.is_dense() ? nullptr : &dims[k]});
  REQUIRE_OK((*w)->append(refs));
  REQUIRE_OK((*w)->close());
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// Every file of a directory, by name, with its bytes.
std::map<std::string, std::vector<uint8_t>> files_of(const std::string& dir) {
  std::map<std::string, std::vector<uint8_t>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out[e.path().filename().string()] = test::read_file(e.path().string());
  return out;
}

struct Parts {
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<Store*> ptrs;
  std::vector<std::string> paths;
};

Parts open_parts(const std::vector<std::string>& paths) {
  Parts p;
  for (const auto& path : paths) {
    auto s = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
    REQUIRE_OK(s);
    p.ptrs.push_back(s->get());
    p.stores.push_back(std::move(s).value());
    p.paths.push_back(path);
  }
  return p;
}

// Today's concat: frames copied through the append engine.
void frame_copy_concat(const std::vector<std::string>& paths, const std::string& dst, bool checksum = false) {
  Parts p = open_parts(paths);
  const Store& first = *p.ptrs.front();
  CreateOptions o{.schema = first.schema(),
                  .codec = first.codec(),
                  .data_shards = first.data_shards(),
                  .dictionary = first.dictionary(),
                  .checksum = checksum};
  REQUIRE_OK(build_from_stores(p.ptrs, dst, o, {}, {}, nullptr, {.lanes = std::make_shared<Lanes>(2)}));
}

// Parts of 0, 1, 2 (< S), 57 and 0 records again: every rotation, empty parts.
std::vector<std::string> make_parts(const test::TempDir& dir, const Schema& schema, Codec codec, uint32_t shards) {
  std::vector<std::string> paths;
  uint64_t first = 0;
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{57}, size_t{0}, size_t{5}}) {
    paths.push_back(dir / ("part" + std::to_string(paths.size())));
    build(paths.back(), schema, codec, shards, first, n);
    first += n;
  }
  return paths;
}

bool verifies(const std::string& path) {
  auto r = verify_store(path, {});
  return r.is_ok() && r->problems.empty();
}

}  // namespace

TEST_SUITE("join") {
  TEST_CASE("layout: bases are prefix sums, shard s of a part with base b runs in shard (s + b) % S") {
    // S = 3; part lengths 2, 0, 4, 1. Tails: what each part's data files hold.
    std::vector<JoinPartShape> shapes = {{2, {10, 20, 0}}, {0, {0, 0, 0}}, {4, {5, 6, 7}}, {1, {9, 0, 0}}};
    auto layout = join_layout(3, shapes);
    REQUIRE_OK(layout);
    CHECK(layout->length == 7);
    REQUIRE(layout->parts.size() == 4);
    CHECK(layout->parts[0].base == 0);
    CHECK(layout->parts[1].base == 2);
    CHECK(layout->parts[2].base == 2);
    CHECK(layout->parts[3].base == 6);
    // Part 0 (base 0): shards 0, 1, 2 at offset 0 of DEST shards 0, 1, 2.
    CHECK(layout->parts[0].offset == std::vector<uint64_t>{0, 0, 0});
    // Part 2 (base 2): its shard 0 goes to DEST shard 2 (tail 0 so far), shard 1 to
    // DEST shard 0 (10 bytes there), shard 2 to DEST shard 1 (20 bytes there).
    CHECK(layout->parts[2].dest_shard(0, 3) == 2);
    CHECK(layout->parts[2].dest_shard(1, 3) == 0);
    CHECK(layout->parts[2].offset == std::vector<uint64_t>{0, 10, 20});
    // Part 3 (base 6 = 0 mod 3): shard 0 to DEST shard 0, after 10 + 6.
    CHECK(layout->parts[3].offset[0] == 16);
    CHECK(layout->tails == std::vector<uint64_t>{10 + 6 + 9, 20 + 7, 0 + 5});
    // The empty part sits where the next one starts, and moves nothing.
    CHECK(layout->parts[1].offset == layout->parts[2].offset);
  }

  TEST_CASE("layout: one shard, wrong tail counts and overflow are refused") {
    std::vector<JoinPartShape> one = {{3, {30}}, {2, {20}}};
    auto layout = join_layout(1, one);
    REQUIRE_OK(layout);
    CHECK(layout->parts[1].offset == std::vector<uint64_t>{30});
    CHECK(layout->tails == std::vector<uint64_t>{50});
    std::vector<JoinPartShape> bad = {{1, {1, 2}}};
    CHECK(join_layout(3, bad).status().message() == "part 0 has 2 data files, the join 3");
    std::vector<JoinPartShape> huge = {{UINT64_MAX / 32, {1}}, {UINT64_MAX / 32, {1}}};
    CHECK(join_layout(1, huge).status().code() == StatusCode::kInvalidArgument);
    std::vector<JoinPartShape> wide = {{1, {UINT64_MAX - 1}}, {1, {2}}};
    CHECK(join_layout(1, wide).status().message() == "data file 0 of the join would pass 2^64 bytes (at part 1)");
    CHECK(join_layout(0, one).status().code() == StatusCode::kInvalidArgument);
    CHECK(join_layout(2, {})->length == 0);
  }

  TEST_CASE("join_stores equals today's frame-copy concat byte for byte") {
    for (Codec codec : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
      for (const Schema& schema : {ragged_u2(), dense_u1()}) {
        for (uint32_t shards : {1u, 3u, 4u}) {
          CAPTURE(to_string(codec));
          CAPTURE(schema.describe());
          CAPTURE(shards);
          test::TempDir dir;
          const auto paths = make_parts(dir, schema, codec, shards);
          frame_copy_concat(paths, dir / "copied");
          Parts p = open_parts(paths);
          JoinStats stats;
          REQUIRE_OK(join_stores(p.ptrs, dir / "placed", false, {}, &stats));
          CHECK(files_of(dir / "placed") == files_of(dir / "copied"));
          CHECK(stats.records == 65);
          CHECK(stats.parts == paths.size());
          CHECK(verifies(dir / "placed"));
        }
      }
    }
  }

  TEST_CASE("an empty join keeps the checksum marker as concat does") {
    test::TempDir dir;
    build(dir / "a", ragged_u2(), Codec::kZstd, 2, 0, 0, /*checksum=*/true);
    frame_copy_concat({dir / "a", dir / "a"}, dir / "copied", true);
    Parts p = open_parts({dir / "a", dir / "a"});
    REQUIRE_OK(join_stores(p.ptrs, dir / "placed", true, {}, nullptr));
    CHECK(files_of(dir / "placed") == files_of(dir / "copied"));
    CHECK(test::read_file(dir / "placed/meta.zr").size() == 4096 + 16);
  }

  TEST_CASE("parts that differ are refused by placement, naming the difference") {
    test::TempDir dir;
    build(dir / "a", ragged_u2(), Codec::kZstd, 2, 0, 3);
    build(dir / "b", ragged_u2(), Codec::kZstd, 3, 3, 3);
    build(dir / "c", ragged_u2(), Codec::kRaw, 2, 3, 3);
    build(dir / "d", dense_u1(), Codec::kZstd, 2, 3, 3);
    build(dir / "e", ragged_u2(), Codec::kZstd, 2, 3, 3, /*checksum=*/true);
    Parts p = open_parts({dir / "a", dir / "b", dir / "c", dir / "d", dir / "e"});
    const std::string a = "'" + dir / "a" + "'";
    CHECK(placement_mismatch({p.ptrs[0], p.ptrs[1]}) == "'" + dir / "b" + "' has 3 data files, " + a + " 2");
    CHECK(placement_mismatch({p.ptrs[0], p.ptrs[2]}) == "'" + dir / "c" + "' has codec raw, " + a + " zstd");
    CHECK(placement_mismatch({p.ptrs[0], p.ptrs[3]}).find("has the schema") != std::string::npos);
    CHECK(placement_mismatch({p.ptrs[0], p.ptrs[4]}) ==
          "'" + dir / "e" + "' has content checksums in its frames, " + a + " has not");
    CHECK(placement_mismatch({p.ptrs[4], p.ptrs[0]}) ==
          "'" + dir / "a" + "' has no content checksums in its frames, '" + dir / "e" + "' has");
    Status s = join_stores({p.ptrs[0], p.ptrs[1]}, dir / "x", false, {}, nullptr);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().starts_with("cannot join by placement: "));
    CHECK(!exists(dir / "x"));
    auto planned = plan_join({dir / "a", dir / "c"}, dir / "y", dir / "y.plan", {});
    CHECK(planned.status().code() == StatusCode::kInvalidArgument);
    CHECK(!exists(dir / "y.plan"));
  }

  TEST_CASE("steps: plan, place in any order and twice, publish: the same store as one process") {
    for (Codec codec : {Codec::kRaw, Codec::kZstdDict}) {
      CAPTURE(to_string(codec));
      test::TempDir dir;
      const auto paths = make_parts(dir, ragged_u2(), codec, 3);
      frame_copy_concat(paths, dir / "copied");
      const std::string plan = dir / "all.plan";
      auto info = plan_join(paths, dir / "all", plan, {});
      REQUIRE_OK(info);
      CHECK(!info->reused);
      CHECK(info->layout.length == 65);
      CHECK(exists(info->temp));
      CHECK(std::filesystem::path(info->temp).filename().string().starts_with(".all.zrec-join-"));
      CHECK(!exists(dir / "all"));
      // Publishing before every part is placed names the missing ones.
      Status early = publish_join(plan, {});
      CHECK(early.code() == StatusCode::kInvalidArgument);
      CHECK(early.message().starts_with("parts 0, 1, 2, 3, 4 and 5 of 6 are not placed yet"));
      for (uint64_t k : {5, 3, 1, 0, 4, 2, 3}) {  // reverse-ish, part 3 twice
        JoinStats stats;
        REQUIRE_OK(place_join_part(plan, k, {}, &stats));
        CHECK(stats.parts == 1);
      }
      auto state = read_join_plan(plan);
      REQUIRE_OK(state);
      CHECK(state->placed == std::vector<bool>(6, true));
      CHECK(!exists(dir / "all"));  // never visible before publish
      bool already = true;
      REQUIRE_OK(publish_join(plan, {}, {}, &already));
      CHECK(!already);
      CHECK(files_of(dir / "all") == files_of(dir / "copied"));
      CHECK(!exists(info->temp));
      // A requeued publish or placement after the publication does nothing, successfully.
      REQUIRE_OK(publish_join(plan, {}, {}, &already));
      CHECK(already);
      JoinStats none;
      REQUIRE_OK(place_join_part(plan, 2, {}, &none));
      CHECK(none.parts == 0);
      state = read_join_plan(plan);
      REQUIRE_OK(state);
      CHECK(state->published);
      // Planning again with the same parts reuses the plan.
      auto again = plan_join(paths, dir / "all", plan, {});
      REQUIRE_OK(again);
      CHECK(again->reused);
      CHECK(again->published);
      REQUIRE_OK(discard_join(plan, {}));
      CHECK(!exists(plan));
      CHECK(files_of(dir / "all") == files_of(dir / "copied"));
    }
  }

  TEST_CASE("an interrupted placement is no placement - placing again gives the same bytes") {
    test::TempDir dir;
    std::vector<std::string> paths;
    for (int k = 0; k < 3; ++k) {
      paths.push_back(dir / ("p" + std::to_string(k)));
      build(paths.back(), ragged_u2(), Codec::kZstd, 4, 70000 * k, 70000);  // two table chunks each
    }
    frame_copy_concat(paths, dir / "copied");
    const std::string plan = dir / "all.plan";
    auto info = plan_join(paths, dir / "all", plan, {});
    REQUIRE_OK(info);
    // Stop part 1 after its first window (a kill or a signal in the middle of it).
    std::atomic<int> cancel{0};
    Context stop;
    stop.control.cancel = {&cancel, -1};
    stop.control.progress = [&](const Progress&) { cancel = 15; };
    Status s = place_join_part(plan, 1, {}, nullptr, stop);
    CHECK(s.code() == StatusCode::kCancelled);
    CHECK(!read_join_plan(plan)->placed[1]);
    // Garbage where part 1's bytes go: a placement must overwrite whatever is there.
    {
      auto f = io::File::open(info->temp + "/data_1.zr", O_RDWR);
      REQUIRE_OK(f);
      std::vector<uint8_t> junk(4096, 0xAB);
      REQUIRE_OK(f->pwrite_all(junk.data(), junk.size(), info->layout.parts[1].offset[0] + 10));
    }
    for (uint64_t k : {2, 0, 1}) REQUIRE_OK(place_join_part(plan, k, {}, nullptr));
    REQUIRE_OK(publish_join(plan, {}));
    CHECK(files_of(dir / "all") == files_of(dir / "copied"));
  }

  TEST_CASE("a publish stopped after its page write finishes when run again") {
    test::TempDir dir;
    const auto paths = make_parts(dir, ragged_u2(), Codec::kZstd, 2);
    const std::string plan = dir / "all.plan";
    auto info = plan_join(paths, dir / "all", plan, {});
    REQUIRE_OK(info);
    for (uint64_t k = 0; k < paths.size(); ++k) REQUIRE_OK(place_join_part(plan, k, {}, nullptr));
    REQUIRE_OK(publish_join(plan, {}));
    const auto published = files_of(dir / "all");
    // The state of a publish killed between removing its markers and its rename: the
    // temporary holds the final page and no marker at all.
    REQUIRE(::rename((dir / "all").c_str(), info->temp.c_str()) == 0);
    JoinStats none;
    REQUIRE_OK(place_join_part(plan, 1, {}, &none));  // sealed: nothing placed again
    CHECK(none.parts == 0);
    bool already = true;
    REQUIRE_OK(publish_join(plan, {}, {}, &already));
    CHECK(!already);
    CHECK(files_of(dir / "all") == published);
  }

  TEST_CASE("a part that changed since the plan, or whose frames are bad, is not placed") {
    test::TempDir dir;
    build(dir / "a", ragged_u2(), Codec::kZstd, 2, 0, 10);
    build(dir / "b", ragged_u2(), Codec::kZstd, 2, 10, 10);
    const std::string plan = dir / "all.plan";
    REQUIRE_OK(plan_join({dir / "a", dir / "b"}, dir / "all", plan, {}));
    {
      auto w = StoreWriter::open(dir / "b");
      REQUIRE_OK(w);
      const auto bytes = test::record_bytes(99, 8);
      const uint64_t dims = 4;
      REQUIRE_OK((*w)->append(std::vector<RecordRef>{{bytes.data(), bytes.size(), &dims}}));
      REQUIRE_OK((*w)->close());
    }
    Status s = place_join_part(plan, 1, {}, nullptr);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == "part 1 '" + dir / "b" +
                             "' changed since the plan was made: it holds 11 records, the plan 10 "
                             "(plan '" +
                             plan + "')");
    // Planning again for the changed parts is refused while the old plan is there.
    auto again = plan_join({dir / "a", dir / "b"}, dir / "all", plan, {});
    CHECK(again.status().code() == StatusCode::kAlreadyExists);
    REQUIRE_OK(discard_join(plan, {}));
    CHECK(std::filesystem::is_empty(dir.path() + "/a") == false);
    // A damaged frame: the placement fails naming it, and leaves no marker.
    REQUIRE_OK(plan_join({dir / "a", dir / "b"}, dir / "all", plan, {}));
    {
      auto f = io::File::open(dir / "a/data_1.zr", O_RDWR);
      REQUIRE_OK(f);
      const uint8_t zero[4] = {};
      REQUIRE_OK(f->pwrite_all(zero, 4, 0));  // record 1's frame magic
    }
    s = place_join_part(plan, 0, {}, nullptr);
    CHECK(s.code() == StatusCode::kMalformed);
    CHECK(s.message().find("data_1.zr: record 1 (offset 0)") != std::string::npos);
    CHECK(!read_join_plan(plan)->placed[0]);
    CHECK(place_join_part(plan, 2, {}, nullptr).message().find("there is no part 2") == 0);
  }

  TEST_CASE("discard removes the temporary and the plan - an orphaned temporary is removed by the next plan") {
    test::TempDir dir;
    build(dir / "a", ragged_u2(), Codec::kRaw, 2, 0, 5);
    const std::string plan = dir / "all.plan";
    auto first = plan_join({dir / "a"}, dir / "all", plan, {});
    REQUIRE_OK(first);
    REQUIRE_OK(place_join_part(plan, 0, {}, nullptr));
    REQUIRE_OK(discard_join(plan, {}));
    CHECK(!exists(first->temp));
    CHECK(!exists(plan));
    CHECK(std::filesystem::is_empty(dir.path()) == false);
    // A plan file lost (a plan_join killed before writing it): its temporary is an orphan.
    auto second = plan_join({dir / "a"}, dir / "all", plan, {});
    REQUIRE_OK(second);
    REQUIRE(::unlink(plan.c_str()) == 0);
    auto third = plan_join({dir / "a"}, dir / "all", plan, {});
    REQUIRE_OK(third);
    CHECK(!exists(second->temp));
    CHECK(exists(third->temp));
    // A temporary holding something else is left alone.
    test::write_file(third->temp + "/notes.txt", {1});
    Status s = discard_join(plan, {});
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(exists(third->temp + "/meta.zr"));
    CHECK(exists(plan));
  }

  TEST_CASE("link_first: DEST's data files are the first part's, which stays valid - remove_store consumes parts") {
    test::TempDir dir;
    const auto paths = make_parts(dir, ragged_u2(), Codec::kZstd, 3);
    frame_copy_concat(paths, dir / "copied");
    {
      // A join that fails (a damaged frame in part 3) leaves the linked first part as it was.
      build(dir / "first", ragged_u2(), Codec::kZstd, 3, 0, 40);
      const auto before = files_of(dir / "first");
      auto f = io::File::open(paths[3] + "/data_2.zr", O_RDWR);
      REQUIRE_OK(f);
      const std::vector<uint8_t> saved = test::read_file(paths[3] + "/data_2.zr");
      const uint8_t zero[4] = {};
      REQUIRE_OK(f->pwrite_all(zero, 4, 0));
      Parts p = open_parts({dir / "first", paths[3]});
      JoinOptions o;
      o.link_first = true;
      CHECK(join_stores(p.ptrs, dir / "failed", false, o, nullptr).code() == StatusCode::kMalformed);
      CHECK(!exists(dir / "failed"));
      CHECK(files_of(dir / "first") == before);
      REQUIRE_OK(f->pwrite_all(saved.data(), 4, 0));
    }
    {
      Parts p = open_parts(paths);
      JoinOptions o;
      o.link_first = true;
      JoinStats stats;
      REQUIRE_OK(join_stores(p.ptrs, dir / "all", false, o, &stats));
      CHECK(stats.bytes_linked == p.ptrs[0]->stored_bytes());
    }
    CHECK(files_of(dir / "all") == files_of(dir / "copied"));
    struct stat a, b;
    REQUIRE(::stat((dir / "all/data_0.zr").c_str(), &a) == 0);
    REQUIRE(::stat((paths[0] + "/data_0.zr").c_str(), &b) == 0);
    CHECK(a.st_ino == b.st_ino);
    CHECK(a.st_nlink == 2);
    CHECK(verifies(paths[0]));  // the other parts' bytes are leftovers past its tails
    for (const auto& path : paths) REQUIRE_OK(remove_store(path));
    for (const auto& path : paths) CHECK(!exists(path));
    REQUIRE(::stat((dir / "all/data_0.zr").c_str(), &a) == 0);
    CHECK(a.st_nlink == 1);
    CHECK(verifies(dir / "all"));
    // remove_store leaves a directory holding anything else.
    build(dir / "z", ragged_u2(), Codec::kZstd, 1, 0, 2);
    test::write_file(dir / "z/keep.txt", {1});
    Status s = remove_store(dir / "z");
    CHECK(s.message() == "'" + dir / "z" + "' holds 'keep.txt', which is not a store file; not removed");
    CHECK(exists(dir / "z/meta.zr"));
  }

  TEST_CASE("plan file: round trip with any path bytes - anything else is refused with its line") {
    store::JoinPlanFile plan;
    plan.id = "0123456789abcdef0123456789abcdef";
    plan.dest = "/x/all";
    plan.temp = "/x/.all.zrec-join-Ab12Cd";
    plan.shards = 2;
    plan.codec = Codec::kZstdDict;
    plan.checksum = true;
    plan.schema = std::string("\x82\xa5", 2) + "dtype";
    plan.dictionary = std::string(64, 'e');
    plan.parts.push_back({"/x/part 0\nwith a newline", {3, {10, 20}}});
    plan.parts.push_back({"/x/p1", {0, {0, 0}}});
    const std::string text = store::encode_join_plan(plan);
    auto back = store::decode_join_plan(text, "p");
    REQUIRE_OK(back);
    CHECK(*back == plan);
    CHECK(store::decode_join_plan("hello\n", "p").status().message() ==
          "'p' is not a zrec join plan (it does not start with 'zrec-join-plan 1')");
    std::string cut = text.substr(0, text.size() - 4);
    CHECK(store::decode_join_plan(cut, "p").status().message() ==
          "'p' is not a zrec join plan: line 16: expected 'end' as the last line");
    std::string bad = text;
    bad.replace(bad.find("shards 2"), 8, "shards 0");
    CHECK(store::decode_join_plan(bad, "p").status().message() ==
          "'p' is not a zrec join plan: line 5: shards must be 1..255");
    bad = text;
    bad.replace(bad.find("tails 10 20"), 11, "tails 10 2x");
    CHECK(store::decode_join_plan(bad, "p").status().code() == StatusCode::kMalformed);
  }
}
