// The record codecs (src/codec/record_codec.h, docs/format.md §6 and §10): round trips
// through raw, zstd and zstd_dict; levels and the checksum flag; every refusal of
// check_frame, Decoder::decode and Decoder::check (exact messages, both the one-shot
// path and the streaming path past 1 MiB); dictionary loading.
#include <zdict.h>
#include <zstd.h>

#include <cstring>

#include "codec/record_codec.h"
#include "testutil.h"

using namespace zrec;
using codec::Decoder;
using codec::Dictionary;
using codec::Encoder;
using codec::EncoderOptions;

namespace {

EncoderOptions options(Codec codec, int level = 0, bool checksum = false,
                       std::shared_ptr<Dictionary> dictionary = nullptr) {
  EncoderOptions o;
  o.codec = codec;
  o.level = level;
  o.checksum = checksum;
  o.dictionary = std::move(dictionary);
  return o;
}

// Decoder::check decodes records up to 1 MiB whole and streams larger ones.
constexpr size_t kStreamed = (size_t{1} << 20) + 4321;

std::vector<uint8_t> encode(const EncoderOptions& o, const std::vector<uint8_t>& logical) {
  auto e = Encoder::create(o);
  REQUIRE_OK(e);
  std::vector<uint8_t> out(e->bound(logical.size()));
  auto n = e->encode(logical.data(), logical.size(), out.data(), out.size());
  REQUIRE_OK(n);
  out.resize(n.value());
  return out;
}

// A frame without a declared content size (zstd's streaming API, size not pledged), as
// other writers may produce: only decoding can tell its length.
std::vector<uint8_t> frame_without_size(const std::vector<uint8_t>& logical) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  std::vector<uint8_t> out(ZSTD_compressBound(logical.size()));
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  ZSTD_inBuffer i{logical.data(), logical.size(), 0};
  const size_t left = ZSTD_compressStream2(c, &o, &i, ZSTD_e_end);
  ZSTD_freeCCtx(c);
  REQUIRE(left == 0);
  out.resize(o.pos);
  return out;
}

// A real (ZDICT-trained) dictionary over records like the test's.
std::shared_ptr<Dictionary> trained_dictionary(uint32_t salt) {
  std::vector<uint8_t> samples;
  std::vector<size_t> sizes;
  for (uint64_t id = 0; id < 400; ++id) {
    auto r = test::record_bytes(id * 7 + salt, 300 + id % 200);
    samples.insert(samples.end(), r.begin(), r.end());
    sizes.push_back(r.size());
  }
  std::vector<uint8_t> dict(4096);
  const size_t n = ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sizes.data(),
                                         static_cast<unsigned>(sizes.size()));
  REQUIRE(!ZDICT_isError(n));
  dict.resize(n);
  auto d = Dictionary::load(dict);
  REQUIRE_OK(d);
  return d.value();
}

std::string decode_error(Decoder& d, const std::vector<uint8_t>& stored, size_t logic_length) {
  std::vector<uint8_t> out(logic_length);
  return d.decode(stored.data(), stored.size(), out.data(), logic_length).message();
}

std::string check_error(Decoder& d, const std::vector<uint8_t>& stored, size_t logic_length) {
  return d.check(stored.data(), stored.size(), logic_length, nullptr, 0).message();
}

}  // namespace

TEST_SUITE("codec") {
  TEST_CASE("every codec round-trips byte-exact through decode and check, whole and streamed") {
    const auto dict = trained_dictionary(1);
    for (Codec c : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
      for (size_t n : {size_t{1}, size_t{777}, size_t{200000}, kStreamed}) {
        CAPTURE(to_string(c));
        CAPTURE(n);
        const auto logical = test::record_bytes(n, n);
        const auto stored = encode(options(c, 0, false, dict), logical);
        if (c == Codec::kRaw) CHECK(stored == logical);
        if (c != Codec::kRaw && n > 1000) CHECK(stored.size() < logical.size());  // record_bytes compresses
        Decoder d(c, c == Codec::kZstdDict ? dict : nullptr);
        std::vector<uint8_t> out(n);
        REQUIRE_OK(d.decode(stored.data(), stored.size(), out.data(), n));
        CHECK(out == logical);
        // check() hands back the head (a Ragged shape prefix) and nothing else.
        uint8_t head[12] = {};
        REQUIRE_OK(d.check(stored.data(), stored.size(), n, head, sizeof head));
        CHECK(std::memcmp(head, logical.data(), std::min(n, sizeof head)) == 0);
        // The same decoder serves the next record (contexts are reused per lane).
        REQUIRE_OK(d.decode(stored.data(), stored.size(), out.data(), n));
        CHECK(out == logical);
      }
    }
  }

  TEST_CASE("an empty record is one frame of zstd and decodes to nothing") {
    const auto stored = encode(options(Codec::kZstd), {});
    CHECK(!stored.empty());
    Decoder d(Codec::kZstd, nullptr);
    REQUIRE_OK(d.decode(stored.data(), stored.size(), nullptr, 0));
    REQUIRE_OK(d.check(stored.data(), stored.size(), 0, nullptr, 0));
  }

  TEST_CASE("level 0 is the format's level: 3 for zstd, 15 for zstd_dict - other levels differ") {
    const auto dict = trained_dictionary(2);
    const auto logical = test::record_bytes(5, 300000);
    CHECK(encode(options(Codec::kZstd), logical) == encode(options(Codec::kZstd, 3), logical));
    CHECK(encode(options(Codec::kZstdDict, 0, false, dict), logical) ==
          encode(options(Codec::kZstdDict, 15, false, dict), logical));
    const auto fast = encode(options(Codec::kZstd, 1), logical);
    const auto strong = encode(options(Codec::kZstd, 19), logical);
    CHECK(fast != strong);
    Decoder d(Codec::kZstd, nullptr);
    for (const auto* stored : {&fast, &strong}) {
      std::vector<uint8_t> out(logical.size());
      REQUIRE_OK(d.decode(stored->data(), stored->size(), out.data(), out.size()));
      CHECK(out == logical);
    }
  }

  TEST_CASE("the checksum flag sets the frame's content checksum, and check() catches a flipped byte with it") {
    for (size_t n : {size_t{5000}, kStreamed}) {
      CAPTURE(n);
      const auto logical = test::record_bytes(9, n);
      const auto plain = encode(options(Codec::kZstd), logical);
      const auto summed = encode(options(Codec::kZstd, 0, true), logical);
      CHECK(codec::frame_has_checksum(plain.data(), plain.size()) == std::optional<bool>(false));
      CHECK(codec::frame_has_checksum(summed.data(), summed.size()) == std::optional<bool>(true));
      CHECK(summed.size() == plain.size() + 4);                             // the XXH64's low 4 bytes end the frame
      CHECK(codec::frame_has_checksum(logical.data(), 4) == std::nullopt);  // not a frame header

      auto flipped = summed;
      flipped[flipped.size() - 1] ^= 0x01;  // a byte of the checksum itself
      Decoder d(Codec::kZstd, nullptr);
      CHECK(check_error(d, flipped, n) == "zstd frame does not decode (Restored data doesn't match checksum)");
      if (n < kStreamed)
        CHECK(decode_error(d, flipped, n) == "zstd frame does not decode (Restored data doesn't match checksum)");
      REQUIRE_OK(d.check(summed.data(), summed.size(), n, nullptr, 0));  // the decoder is still usable
    }
  }

  TEST_CASE("a flipped payload byte: caught by the checksum - without one, at most as a wrong content") {
    // The last block's bytes of a frame of incompressible data are stored raw, so a flip
    // there decodes to the right length: only the content checksum can tell.
    std::vector<uint8_t> noise(4096);
    uint64_t x = 88172645463325252ull;
    for (auto& b : noise) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b = static_cast<uint8_t>(x);
    }
    const auto plain = encode(options(Codec::kZstd), noise);
    const auto summed = encode(options(Codec::kZstd, 0, true), noise);
    auto flip = [](std::vector<uint8_t> v, size_t from_end) {
      v[v.size() - from_end] ^= 0x40;
      return v;
    };
    Decoder d(Codec::kZstd, nullptr);
    std::vector<uint8_t> out(noise.size());
    const auto bad_plain = flip(plain, 10);
    REQUIRE_OK(d.decode(bad_plain.data(), bad_plain.size(), out.data(), out.size()));
    CHECK(out != noise);  // the blind spot verify reports for frames without a checksum
    CHECK(check_error(d, flip(summed, 14), noise.size()) ==
          "zstd frame does not decode (Restored data doesn't match checksum)");
  }

  TEST_CASE("a wrong content size is refused before decoding, with the declared and expected sizes") {
    const auto logical = test::record_bytes(3, 1000);
    const auto stored = encode(options(Codec::kZstd), logical);
    Decoder d(Codec::kZstd, nullptr);
    CHECK(decode_error(d, stored, 999) == "zstd frame declares 1000 bytes but logic_length is 999");
    CHECK(check_error(d, stored, 1001) == "zstd frame declares 1000 bytes but logic_length is 1001");
    CHECK(codec::check_frame(stored.data(), stored.size(), 1001).message() ==
          "zstd frame declares 1000 bytes but logic_length is 1001");
    REQUIRE_OK(codec::check_frame(stored.data(), stored.size(), 1000));
    // Streamed: the same rule, checked first.
    const auto big = encode(options(Codec::kZstd), test::record_bytes(3, kStreamed));
    CHECK(check_error(d, big, kStreamed - 1) == "zstd frame declares " + std::to_string(kStreamed) +
                                                    " bytes but logic_length is " + std::to_string(kStreamed - 1));
  }

  TEST_CASE("a frame without a declared size is measured by decoding it") {
    for (size_t n : {size_t{1000}, kStreamed}) {
      CAPTURE(n);
      const auto logical = test::record_bytes(4, n);
      const auto stored = frame_without_size(logical);
      Decoder d(Codec::kZstd, nullptr);
      REQUIRE_OK(codec::check_frame(stored.data(), stored.size(), n + 1));  // nothing declared to compare
      REQUIRE_OK(d.check(stored.data(), stored.size(), n, nullptr, 0));
      std::vector<uint8_t> out(n);
      REQUIRE_OK(d.decode(stored.data(), stored.size(), out.data(), n));
      CHECK(out == logical);
      const std::string n_text = std::to_string(n);
      if (n < kStreamed) {
        CHECK(check_error(d, stored, n + 1) ==
              "zstd frame decompresses to " + n_text + " bytes, not logic_length " + std::to_string(n + 1));
        CHECK(check_error(d, stored, n - 1) == "zstd frame does not decode (Destination buffer is too small)");
      } else {
        CHECK(check_error(d, stored, n + 1) ==
              "zstd frame decompresses to " + n_text + " bytes, not logic_length " + std::to_string(n + 1));
        CHECK(check_error(d, stored, n - 1) ==
              "zstd frame decompresses to more than logic_length " + std::to_string(n - 1) + " bytes");
      }
    }
  }

  TEST_CASE("a truncated frame, bytes after it, a bad magic: each refused with the rule it breaks") {
    for (size_t n : {size_t{5000}, kStreamed}) {
      CAPTURE(n);
      const auto stored = encode(options(Codec::kZstd), test::record_bytes(6, n));
      Decoder d(Codec::kZstd, nullptr);
      const std::vector<uint8_t> cut(stored.begin(), stored.end() - 1);
      CHECK(check_error(d, cut, n) == "zstd frame is damaged (Src size is incorrect)");
      CHECK(decode_error(d, cut, n) == "zstd frame is damaged (Src size is incorrect)");
      auto longer = stored;
      longer.insert(longer.end(), {1, 2, 3});
      CHECK(check_error(d, longer, n) == "stored bytes hold 3 bytes after the zstd frame (one frame per record)");
      // Two whole frames back to back are two records' worth, not one.
      auto two = stored;
      two.insert(two.end(), stored.begin(), stored.end());
      CHECK(decode_error(d, two, n) == "stored bytes hold " + std::to_string(stored.size()) +
                                           " bytes after the zstd frame (one frame per record)");
      auto magic = stored;
      magic[0] ^= 0xFF;
      CHECK(check_error(d, magic, n) == "stored bytes are not a zstd frame (bad magic number)");
      CHECK(check_error(d, {0x28, 0xB5, 0x2F}, n) == "stored bytes are not a zstd frame (bad magic number)");
    }
    // A skippable frame is a frame zstd knows, but not a record (docs/format.md §10).
    std::vector<uint8_t> skippable = {0x50, 0x2A, 0x4D, 0x18, 0, 0, 0, 0};
    Decoder d(Codec::kZstd, nullptr);
    CHECK(decode_error(d, skippable, 0) == "stored bytes are not a zstd frame (bad magic number)");
  }

  TEST_CASE("a raw record's stored and logical lengths must agree") {
    const auto logical = test::record_bytes(1, 100);
    Decoder d(Codec::kRaw, nullptr);
    CHECK(decode_error(d, logical, 101) == "raw record has phys_length 100 != logic_length 101");
    CHECK(check_error(d, logical, 99) == "raw record has phys_length 100 != logic_length 99");
    uint8_t head[4] = {};
    REQUIRE_OK(d.check(logical.data(), logical.size(), logical.size(), head, sizeof head));
    CHECK(std::memcmp(head, logical.data(), 4) == 0);
  }

  TEST_CASE("dictionaries: too short, not zstd's, missing, or another one than the frame's") {
    auto short_one = Dictionary::load({1, 2, 3, 4, 5, 6, 7});
    CHECK(short_one.status().code() == StatusCode::kMalformed);
    CHECK(short_one.status().message() == "dict.zr has 7 bytes; a dictionary needs at least 8");
    // The dictionary magic (0xEC30A437) promises entropy tables that are not there.
    auto broken = Dictionary::load({0x37, 0xA4, 0x30, 0xEC, 1, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9});
    CHECK(broken.status().code() == StatusCode::kMalformed);
    CHECK(broken.status().message() == "dict.zr is not a dictionary zstd accepts");
    // Any other 8 bytes or more are a raw-content dictionary (zstd's rule); it works.
    auto content = Dictionary::load({'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'});
    REQUIRE_OK(content);
    CHECK(content.value()->bytes().size() == 8);

    auto none = Encoder::create(options(Codec::kZstdDict));
    CHECK(none.status().code() == StatusCode::kInvalidArgument);
    CHECK(none.status().message() == "codec zstd_dict needs a dictionary");

    const auto one = trained_dictionary(3);
    const auto other = trained_dictionary(4);
    REQUIRE(ZDICT_getDictID(one->bytes().data(), one->bytes().size()) !=
            ZDICT_getDictID(other->bytes().data(), other->bytes().size()));
    const auto logical = test::record_bytes(11, 3000);
    const auto stored = encode(options(Codec::kZstdDict, 0, false, one), logical);
    Decoder wrong(Codec::kZstdDict, other);
    CHECK(decode_error(wrong, stored, logical.size()) == "zstd frame does not decode (Dictionary mismatch)");
    Decoder plain(Codec::kZstd, nullptr);
    CHECK(decode_error(plain, stored, logical.size()) == "zstd frame does not decode (Dictionary mismatch)");
    // A compression dictionary per level, rebuilt when the level changes.
    auto c15 = one->cdict(15);
    REQUIRE_OK(c15);
    auto c15_again = one->cdict(15);
    REQUIRE_OK(c15_again);
    CHECK(c15.value() == c15_again.value());
    REQUIRE_OK(one->cdict(3));
  }
}
