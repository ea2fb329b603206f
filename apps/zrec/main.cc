// zrec: build, inspect, check and measure zrecord stores. All logic is in run_cli().
#include <csignal>
#include <cstdio>
#include <exception>

#include "zrec/app.h"

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f), write(2) fails with EFBIG and zrec reports it and
  // leaves the store as published, instead of dying of SIGXFSZ mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return zrec::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zrec: internal error: %s\n", e.what());
    return 1;
  }
}
