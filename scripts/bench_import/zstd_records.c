// The in-memory limit of compressing an import's records, for scripts/bench_import.py:
// a bare per-record ZSTD_compressCCtx loop at the given level over the records of FILE
// (each preceded by its 8-byte little-endian length), on LANES threads (record i on
// thread i % LANES, one context and one output buffer each). With `ragged`, each record
// is compressed with its 8-byte length in front, as a Ragged |u1 store's logical record
// is (the format's shape prefix); without, as it is (a Dense store's record).
// The file is read into memory first (not timed).
// Usage: zstd_records FILE LEVEL LANES [ragged]   (prints seconds, records, compressed bytes)
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

struct lane {
  const unsigned char** records;  // each points at its 8-byte length, then its bytes
  size_t count, first, step;
  int level, ragged;
  unsigned long long stored;
};

static uint64_t length_at(const unsigned char* p) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= (uint64_t)p[i] << (8 * i);
  return n;
}

static void* compress_lane(void* arg) {
  struct lane* l = arg;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  size_t cap = 1 << 16;
  unsigned char* out = malloc(cap);
  for (size_t i = l->first; i < l->count; i += l->step) {
    const unsigned char* p = l->records[i];
    const size_t n = (size_t)length_at(p) + (l->ragged ? 8 : 0);
    const unsigned char* src = l->ragged ? p : p + 8;
    if (ZSTD_compressBound(n) > cap) out = realloc(out, cap = ZSTD_compressBound(n));
    const size_t r = ZSTD_compressCCtx(cctx, out, cap, src, n, l->level);
    if (ZSTD_isError(r)) {
      fprintf(stderr, "%s\n", ZSTD_getErrorName(r));
      exit(1);
    }
    l->stored += r;
  }
  free(out);
  ZSTD_freeCCtx(cctx);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: zstd_records FILE LEVEL LANES [ragged]\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = malloc(size > 0 ? size : 1);
  if (fread(data, 1, size, f) != (size_t)size) {
    perror("read");
    return 1;
  }
  fclose(f);
  size_t count = 0, cap = 1024;
  const unsigned char** records = malloc(cap * sizeof *records);
  for (const unsigned char *p = data, *end = data + size; p + 8 <= end; p += 8 + length_at(p)) {
    if (count == cap) records = realloc(records, (cap *= 2) * sizeof *records);
    records[count++] = p;
  }
  const int lanes = atoi(argv[3]) > 0 ? atoi(argv[3]) : 1;
  struct lane* l = calloc(lanes, sizeof *l);
  pthread_t* threads = calloc(lanes, sizeof *threads);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < lanes; ++i) {
    l[i] = (struct lane){
        records, count, (size_t)i, (size_t)lanes, atoi(argv[2]), argc == 5 && !strcmp(argv[4], "ragged"), 0};
    pthread_create(&threads[i], NULL, compress_lane, &l[i]);
  }
  unsigned long long stored = 0;
  for (int i = 0; i < lanes; ++i) {
    pthread_join(threads[i], NULL);
    stored += l[i].stored;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.6f %zu %llu\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), count, stored);
  return 0;
}
