// zrec: build, inspect, check and measure zrecord stores. All logic is in run_cli().
#include <cstdio>
#include <exception>

#include "zrec/app.h"

int main(int argc, char** argv) {
  try {
    return zrec::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zrec: internal error: %s\n", e.what());
    return 1;
  }
}
