// The in-memory limit of `zrec append-stream` into a zstd store, for scripts/bench_cli.sh:
// the file is read into memory first (not timed), then each line (newline dropped) is
// compressed on its own with ZSTD_compressCCtx at the given level, reusing one context
// and one output buffer, as a bare per-record loop would. With `ragged`, each line is
// first preceded by its 8-byte little-endian length, as a Ragged |u1 store's logical
// record is (the shape prefix is part of what zrec must compress; the format fixes it).
// Usage: zstd_lines FILE LEVEL [ragged]   (prints seconds, records, compressed bytes)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) { fprintf(stderr, "usage: zstd_lines FILE LEVEL [ragged]\n"); return 2; }
  const int ragged = argc == 4 && strcmp(argv[3], "ragged") == 0;
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
  size_t stage_cap = 1 << 16;
  char* stage = malloc(stage_cap);
  unsigned long long records = 0, stored = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (char *p = data, *end = data + size; p < end;) {
    char* nl = memchr(p, '\n', end - p);
    const size_t len = (nl ? nl : end) - p;
    const char* src = p;
    size_t n = len;
    if (ragged) {
      if (len + 8 > stage_cap) stage = realloc(stage, stage_cap = len + 8);
      for (int i = 0; i < 8; ++i) stage[i] = (char)((unsigned long long)len >> (8 * i));
      memcpy(stage + 8, p, len);
      src = stage;
      n = len + 8;
    }
    if (ZSTD_compressBound(n) > cap) out = realloc(out, cap = ZSTD_compressBound(n));
    const size_t r = ZSTD_compressCCtx(cctx, out, cap, src, n, level);
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
