// Datasets of named streams (zrec/dataset.h): what DatasetWriter writes, Dataset reads
// back; a run stopped between its streams' publication and the root's commit is seen
// at the committed count and cut back by the next writer; misuse of the writer is a
// usage error; the alignment problems both sides share (store/stream_alignment.h).
#include "zrec/dataset.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "testutil.h"

using namespace zrec;

namespace {

using Kind = StreamProblem::Kind;

// A stream of Dense scalar '<i8' records (the sample's label).
CreateOptions label_stream() {
  CreateOptions c;
  c.schema.dtype = parse_dtype("<i8").value();
  c.schema.ndim = 0;
  c.schema.item_shape = std::vector<uint64_t>{};
  return c;
}

// Appends samples first .. first+n-1 to `streams`: record i of each is the label 10*i + k
// (k the stream's place), so every stream is told apart and lines up by sample.
void append_samples(const std::vector<StoreWriter*>& streams, int64_t first, int64_t n) {
  for (int64_t i = first; i < first + n; ++i)
    for (size_t k = 0; k < streams.size(); ++k) {
      const int64_t label = 10 * i + static_cast<int64_t>(k);
      const RecordRef r{reinterpret_cast<const uint8_t*>(&label), sizeof label, nullptr};
      REQUIRE_OK(streams[k]->append({&r, 1}));
    }
}

// A root of streams "a" and "b" holding `n` committed samples.
void write_root(const std::string& root, int64_t n) {
  auto w = DatasetWriter::open(root);
  REQUIRE_OK(w);
  REQUIRE_OK((*w)->recover());
  auto a = (*w)->stream("a", label_stream());
  REQUIRE_OK(a);
  auto b = (*w)->stream("b", label_stream());
  REQUIRE_OK(b);
  append_samples({*a, *b}, 0, n);
  REQUIRE_OK((*w)->close());
}

std::vector<int64_t> labels(Store& store) {
  std::vector<uint64_t> ids(store.length());
  for (uint64_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<int64_t> out;
  const Status s = store.scan(ids, kDefaultWindowBytes, [&](const Window& w) {
    for (size_t k = 0; k < w.ids.size(); ++k) {
      int64_t v = 0;
      std::memcpy(&v, w.data + w.offsets[k], sizeof v);
      out.push_back(v);
    }
    return Status::ok();
  });
  REQUIRE_OK(s);
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  test::write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

}  // namespace

TEST_SUITE("dataset") {
  TEST_CASE("what the writer commits, the reader reads back: streams, samples, records") {
    test::TempDir dir;
    const std::string root = dir / "ds";
    {
      auto w = DatasetWriter::open(root);
      REQUIRE_OK(w);
      REQUIRE_OK((*w)->recover());
      auto cls = (*w)->stream("cls", label_stream());
      REQUIRE_OK(cls);
      auto box = (*w)->stream("box", label_stream());
      REQUIRE_OK(box);
      append_samples({*box, *cls}, 0, 10);
      REQUIRE_OK((*w)->publish());
      append_samples({*box, *cls}, 10, 5);
      REQUIRE_OK((*w)->close());
      CHECK((*w)->committed_length() == 15);
    }
    auto ds = Dataset::open(root);
    REQUIRE_OK(ds);
    CHECK(ds->marked());
    CHECK_FALSE(ds->empty());
    CHECK(ds->root() == root);
    CHECK(ds->length() == 15);
    CHECK(ds->streams() == std::vector<std::string>{"box", "cls"});
    CHECK(ds->stores() == std::vector<std::string>{"box", "cls"});
    CHECK(ds->unadopted().empty());
    CHECK(ds->committed() == RootState{15, {"box", "cls"}});
    CHECK(ds->path_of("cls") == root + "/cls");
    auto problems = ds->check();
    REQUIRE_OK(problems);
    CHECK(problems->empty());
    auto cls = ds->open_stream("cls");
    REQUIRE_OK(cls);
    CHECK((*cls)->length() == 15);
    const std::vector<int64_t> got = labels(**cls);
    REQUIRE(got.size() == 15);
    for (int64_t i = 0; i < 15; ++i) CHECK(got[static_cast<size_t>(i)] == 10 * i + 1);
  }

  TEST_CASE("a run stopped after a stream's publication, before the commit: read at the commit, cut back") {
    test::TempDir dir;
    const std::string root = dir / "ds";
    write_root(root, 3);
    {
      // Two more samples; stream "a" alone is published, then the run stops (its
      // writer goes away without a commit, as a killed process leaves the files).
      auto w = DatasetWriter::open(root);
      REQUIRE_OK(w);
      REQUIRE_OK((*w)->recover());
      StoreWriter* a = (*w)->find("a");
      StoreWriter* b = (*w)->find("b");
      REQUIRE(a != nullptr);
      REQUIRE(b != nullptr);
      append_samples({a, b}, 3, 2);
      REQUIRE_OK(a->publish());
    }
    auto ds = Dataset::open(root);
    REQUIRE_OK(ds);
    CHECK(ds->length() == 3);
    auto problems = ds->check();
    REQUIRE_OK(problems);
    REQUIRE(problems->size() == 1);
    CHECK(problems->at(0).kind == Kind::kLong);
    CHECK(problems->at(0).stream == "a");
    CHECK(problems->at(0).length == uint64_t{5});
    auto a = ds->open_stream("a");
    REQUIRE_OK(a);
    CHECK((*a)->length() == 5);  // records past the commit are there, but no sample's
    a->reset();

    auto w = DatasetWriter::open(root);
    REQUIRE_OK(w);
    CHECK((*w)->committed_length() == 3);
    auto cuts = (*w)->recover();
    REQUIRE_OK(cuts);
    REQUIRE(cuts->size() == 1);
    CHECK(cuts->at(0).name == "a");
    CHECK(cuts->at(0).from == 5);
    REQUIRE_OK((*w)->close());
    w->reset();
    auto again = Dataset::open(root);
    REQUIRE_OK(again);
    problems = again->check();
    REQUIRE_OK(problems);
    CHECK(problems->empty());
    auto cut = again->open_stream("a");
    REQUIRE_OK(cut);
    CHECK(labels(**cut) == std::vector<int64_t>{0, 10, 20});
  }

  TEST_CASE("the writer used before recover() is a usage error that changes nothing") {
    test::TempDir dir;
    const std::string root = dir / "ds";
    write_root(root, 2);
    auto w = DatasetWriter::open(root);
    REQUIRE_OK(w);
    const Status published = (*w)->publish();
    CHECK(published.code() == StatusCode::kInvalidArgument);
    CHECK(published.message() == "DatasetWriter of root '" + root +
                                     "': publish() needs recover() first (it cuts the streams back to the committed "
                                     "count); nothing was published");
    auto added = (*w)->stream("c", label_stream());
    CHECK(added.status().code() == StatusCode::kInvalidArgument);
    CHECK(added.status().message() ==
          "DatasetWriter of root '" + root +
              "': stream('c') creates a stream, which needs recover() first (it cuts the streams back to the "
              "committed count); nothing was changed");
    CHECK(::access((root + "/c").c_str(), F_OK) != 0);
    // An existing stream's writer needs no recovery to be handed out.
    auto a = (*w)->stream("a", label_stream());
    REQUIRE_OK(a);
    REQUIRE_OK((*w)->recover());
    REQUIRE_OK((*w)->close());
  }

  TEST_CASE("alignment problems the reader reports, by the rule the writer refuses with") {
    test::TempDir dir;
    const std::string root = dir / "ds";
    write_root(root, 3);
    // A store not listed (not adopted yet), holding other than the committed count.
    REQUIRE_OK(create_store(root + "/extra", label_stream()));
    {
      auto ds = Dataset::open(root);
      REQUIRE_OK(ds);
      CHECK(ds->stores() == std::vector<std::string>{"a", "b", "extra"});
      CHECK(ds->unadopted() == std::vector<std::string>{"extra"});
      auto problems = ds->check();
      REQUIRE_OK(problems);
      REQUIRE(problems->size() == 1);
      CHECK(problems->at(0).kind == Kind::kUnlisted);
      CHECK(problems->at(0).stream == "extra");
      CHECK(problems->at(0).length == uint64_t{0});
      // Unknown lengths: the store's place is checked, not its records.
      const auto unknown = ds->problems({});
      REQUIRE(unknown.size() == 1);
      CHECK(unknown[0].length == std::nullopt);
      const auto w = DatasetWriter::open(root);
      CHECK(w.status().message() ==
            "'" + root + "/extra' is a store in root '" + root +
                "' but not one of its streams (zrec-root lists a, b); it is left alone: move it out of the root, "
                "or adopt it if it holds one record per sample; nothing was changed");
    }
    REQUIRE(::rename((root + "/extra").c_str(), (dir / "extra").c_str()) == 0);
    // A marker that commits more samples than the streams hold, and a stream that is gone.
    write_text(root + "/zrec-root", "zrec-root 1\nlength 9\nstream a\nstream b\nstream gone\n");
    // A store in the root that is a link: none of its streams.
    REQUIRE(::symlink((dir / "extra").c_str(), (root + "/linked").c_str()) == 0);
    auto ds = Dataset::open(root);
    REQUIRE_OK(ds);
    CHECK(ds->length() == 9);
    auto problems = ds->check();
    REQUIRE_OK(problems);
    REQUIRE(problems->size() == 5);
    CHECK(problems->at(0).kind == Kind::kLayout);
    CHECK(problems->at(0).stream == "linked");
    CHECK(problems->at(0).why.find("is a symbolic link") != std::string::npos);
    CHECK(problems->at(1).kind == Kind::kShort);
    CHECK(problems->at(1).stream == "a");
    CHECK(problems->at(1).length == uint64_t{3});
    CHECK(problems->at(2).kind == Kind::kShort);
    CHECK(problems->at(2).stream == "b");
    CHECK(problems->at(3).kind == Kind::kMissing);
    CHECK(problems->at(3).stream == "gone");
    CHECK(problems->at(4).kind == Kind::kUnlisted);
    CHECK(problems->at(4).stream == "linked");
    // The writer refuses the same root, naming the first problem it meets.
    REQUIRE(::unlink((root + "/linked").c_str()) == 0);
    auto w = DatasetWriter::open(root);
    CHECK(w.status().code() == StatusCode::kInvalidArgument);
    CHECK(w.status().message() == "root '" + root + "' lists the stream 'gone' in zrec-root, but '" + root +
                                      "/gone' is not a store; nothing was changed");
    write_text(root + "/zrec-root", "zrec-root 1\nlength 9\nstream a\nstream b\n");
    w = DatasetWriter::open(root);
    CHECK(w.status().message() == "stream '" + root + "/a' holds 3 records, fewer than the 9 samples root '" + root +
                                      "' committed: the stream lost records; nothing was changed");
  }

  TEST_CASE("a directory without the marker is no root, and a missing one is empty") {
    test::TempDir dir;
    const std::string stores = dir / "stores";
    REQUIRE(::mkdir(stores.c_str(), 0755) == 0);
    REQUIRE_OK(create_store(stores + "/x", label_stream()));
    REQUIRE_OK(create_store(stores + "/y", label_stream()));
    auto ds = Dataset::open(stores);
    REQUIRE_OK(ds);
    CHECK_FALSE(ds->marked());
    CHECK_FALSE(ds->empty());
    CHECK(ds->length() == 0);
    CHECK(ds->streams().empty());
    CHECK(ds->stores() == std::vector<std::string>{"x", "y"});
    CHECK(ds->unadopted().empty());
    CHECK(ds->problems({{"x", 1}, {"y", 2}}).empty());  // unrelated stores: lengths mean nothing

    auto none = Dataset::open(dir / "nothing");
    REQUIRE_OK(none);
    CHECK(none->empty());

    write_text(stores + "/zrec-root", "zrec-root 2\n");
    auto bad = Dataset::open(stores);
    CHECK(bad.status().code() == StatusCode::kMalformed);
    CHECK(bad.status().message() ==
          "malformed root marker '" + stores + "/zrec-root': its first line is not 'zrec-root 1'");
  }
}
