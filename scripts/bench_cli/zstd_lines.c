// The in-memory limit of `zrec append-stream` into a zstd store, for scripts/bench_cli.sh:
// the file is read into memory first (not timed), then each line (newline dropped) is
// compressed on its own with ZSTD_compressCCtx at the given level, reusing one context
// and one output buffer, as a bare per-record loop would.
// Usage: zstd_lines FILE LEVEL   (prints seconds, records, compressed bytes)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: zstd_lines FILE LEVEL\n"); return 2; }
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc(size > 0 ? size : 1);
  if (fread(data, 1, size, f) != (size_t)size) { perror("read"); return 1; }
  fclose(f);
  const int level = atoi(argv[2]);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  size_t cap = 1 << 16;
  char* out = malloc(cap);
  unsigned long long records = 0, stored = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (char *p = data, *end = data + size; p < end;) {
    char* nl = memchr(p, '\n', end - p);
    const size_t len = (nl ? nl : end) - p;
    if (ZSTD_compressBound(len) > cap) out = realloc(out, cap = ZSTD_compressBound(len));
    const size_t r = ZSTD_compressCCtx(cctx, out, cap, p, len, level);
    if (ZSTD_isError(r)) { fprintf(stderr, "%s\n", ZSTD_getErrorName(r)); return 1; }
    stored += r;
    ++records;
    p += len + 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.6f %llu %llu\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), records, stored);
  ZSTD_freeCCtx(cctx);
  return 0;
}
