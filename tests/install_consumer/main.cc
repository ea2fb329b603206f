// A program outside zrec that uses the installed package: opens a store, prints its
// length. tests/cli/test_install.sh builds it with find_package(zrec) and with pkg-config.
#include <cstdio>

#include <zrec/store.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s STORE\n", argv[0]);
    return 2;
  }
  auto store = zrec::Store::open(argv[1]);
  if (!store.is_ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return 1;
  }
  std::printf("%llu\n", static_cast<unsigned long long>((*store)->length()));
  return 0;
}
