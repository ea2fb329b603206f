// SHA-256 against the FIPS 180-4 / NIST example vectors, and incremental updates.
#include "format/sha256.h"

#include <string>

#include "testutil.h"

using zrec::format::Sha256;
using zrec::format::to_hex;

TEST_SUITE("sha256") {
  TEST_CASE("matches the NIST example vectors") {
    CHECK(to_hex(Sha256::hash("", 0)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(to_hex(Sha256::hash("abc", 3)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(to_hex(Sha256::hash(two_blocks.data(), two_blocks.size())) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const std::string million(1000000, 'a');
    CHECK(to_hex(Sha256::hash(million.data(), million.size())) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }

  TEST_CASE("incremental updates of any split give the one-shot digest") {
    std::string text;
    for (int i = 0; i < 300; ++i) text += static_cast<char>('a' + i % 26);
    const auto whole = Sha256::hash(text.data(), text.size());
    for (size_t split : {0, 1, 55, 56, 63, 64, 65, 128, 299, 300}) {
      CAPTURE(split);
      Sha256 h;
      h.update(text.data(), split);
      h.update(text.data() + split, text.size() - split);
      CHECK(h.finish() == whole);
    }
    // finish() resets: the object hashes a new message from scratch.
    Sha256 h;
    h.update("junk");
    (void)h.finish();
    h.update("abc");
    CHECK(to_hex(h.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }

  TEST_CASE("lengths around the padding boundary (55, 56, 64 bytes)") {
    // Python: hashlib.sha256(b'a' * n).hexdigest()
    const std::string a55(55, 'a'), a56(56, 'a'), a64(64, 'a');
    CHECK(to_hex(Sha256::hash(a55.data(), 55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    CHECK(to_hex(Sha256::hash(a56.data(), 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    CHECK(to_hex(Sha256::hash(a64.data(), 64)) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  }
}
