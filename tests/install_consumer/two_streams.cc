// A program outside zrec that builds a dataset of two named streams through the
// installed library alone (zrec/dataset.h), with the crash guarantees of the CLI.
//
//   two_streams ROOT N [--crash-after K]
//
// Appends samples until ROOT holds N: sample i is a Ragged '|u1' record "sample <i>" in
// stream "txt" and a Dense scalar '<i8' record i in stream "cls", published every 10
// samples. A rerun continues from the committed count, whatever a crash left: the
// writer cuts every stream back to it first. With --crash-after K the run, after K
// samples, publishes "txt" alone and SIGKILLs itself: a crash between two streams'
// publications, which the next run must recover from. At the end it reads the dataset
// back through zrec::Dataset (both streams committed and lined up, the last sample's
// label) and prints the committed count. tests/cli/test_install.sh runs it.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <zrec/context.h>
#include <zrec/dataset.h>

namespace {

int fail(const zrec::Status& s) {
  std::fprintf(stderr, "two_streams: %s\n", s.message().c_str());
  return 1;
}

zrec::CreateOptions stream_options(const char* dtype, bool scalar) {
  zrec::CreateOptions c;
  c.schema.dtype = zrec::parse_dtype(dtype).value();
  c.schema.ndim = scalar ? 0 : 1;
  if (scalar) c.schema.item_shape = std::vector<uint64_t>{};
  c.codec = zrec::Codec::kZstd;
  return c;
}

// Reads the dataset back through zrec::Dataset: its two committed streams, lined up at
// `committed` samples, the last of which is sample committed - 1 in both, every stream
// opened in one Context (two lanes they share). Prints the count.
int read_back(const std::string& root, uint64_t committed) {
  const zrec::Context ctx{.lanes = std::make_shared<zrec::Lanes>(2)};
  auto read = zrec::Dataset::open(root, {}, ctx);
  if (!read.is_ok()) return fail(read.status());
  if (!read->marked() || read->streams() != std::vector<std::string>{"cls", "txt"} || read->length() != committed) {
    std::fprintf(stderr, "two_streams: %s reads back other than it was written\n", root.c_str());
    return 1;
  }
  auto problems = read->check();
  if (!problems.is_ok()) return fail(problems.status());
  if (!problems->empty()) {
    std::fprintf(stderr, "two_streams: stream %s of %s does not line up\n", problems->front().stream.c_str(),
                 root.c_str());
    return 1;
  }
  if (committed > 0) {
    auto cls = read->open_stream("cls");
    if (!cls.is_ok()) return fail(cls.status());
    const std::vector<uint64_t> last = {committed - 1};
    int64_t label = -1;
    auto s = (*cls)->scan(last, zrec::kDefaultWindowBytes, [&](const zrec::Window& w) {
      std::memcpy(&label, w.data + w.offsets[0], sizeof label);
      return zrec::Status::ok();
    });
    if (!s.is_ok()) return fail(s);
    if (label != static_cast<int64_t>(committed - 1)) {
      std::fprintf(stderr, "two_streams: sample %llu of %s reads back label %lld\n",
                   static_cast<unsigned long long>(committed - 1), root.c_str(), static_cast<long long>(label));
      return 1;
    }
  }
  std::printf("%llu\n", static_cast<unsigned long long>(read->length()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::strcmp(argv[3], "--crash-after") == 0)) {
    std::fprintf(stderr, "usage: %s ROOT N [--crash-after K]\n", argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  const uint64_t want = std::strtoull(argv[2], nullptr, 10);
  const uint64_t crash_after = argc == 5 ? std::strtoull(argv[4], nullptr, 10) : UINT64_MAX;

  auto opened = zrec::DatasetWriter::open(root);
  if (!opened.is_ok()) return fail(opened.status());
  zrec::DatasetWriter& ds = **opened;
  auto cuts = ds.recover();
  if (!cuts.is_ok()) return fail(cuts.status());
  for (const auto& cut : *cuts)
    std::printf("recovered: cut %s from %llu to %llu\n", cut.name.c_str(), static_cast<unsigned long long>(cut.from),
                static_cast<unsigned long long>(ds.committed_length()));
  auto txt = ds.stream("txt", stream_options("|u1", false));
  if (!txt.is_ok()) return fail(txt.status());
  auto cls = ds.stream("cls", stream_options("<i8", true));
  if (!cls.is_ok()) return fail(cls.status());

  uint64_t done = 0;
  for (uint64_t i = ds.committed_length(); i < want; ++i) {
    const std::string text = "sample " + std::to_string(i);
    const uint64_t length = text.size();
    const int64_t label = static_cast<int64_t>(i);
    const zrec::RecordRef t{reinterpret_cast<const uint8_t*>(text.data()), length, &length};
    const zrec::RecordRef c{reinterpret_cast<const uint8_t*>(&label), sizeof label, nullptr};
    if (auto s = (*txt)->append({&t, 1}); !s.is_ok()) return fail(s);
    if (auto s = (*cls)->append({&c, 1}); !s.is_ok()) return fail(s);
    if (++done == crash_after) {
      if (auto s = (*txt)->publish(); !s.is_ok()) return fail(s);
      std::raise(SIGKILL);
    }
    if ((i + 1) % 10 == 0)
      if (auto s = ds.publish(); !s.is_ok()) return fail(s);
  }
  if (auto s = ds.close(); !s.is_ok()) return fail(s);
  return read_back(root, ds.committed_length());
}
