// The physical limit of `zrec cat --indices-from IDS --format raw`, for
// scripts/bench_cli.sh: LANES threads take batches of 256 ids in turn; for each id a
// lane preads its 16-byte RecordLoc from meta.zr (the table starts at 4096), then
// preads the record into its slot of the lane's reused batch buffer (raw store), or
// preads its zstd frame into the lane's scratch and decodes it into the slot with the
// lane's one ZSTD_DCtx (zstd store). Nothing else. The script times the whole process,
// as it times zrec's.
// Usage: pread_gather STORE IDS_FILE LANES SLOT_BYTES [zstd]   (prints gathered bytes)
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

enum { kBatch = 256, kMaxShards = 255 };

static int meta_fd, data_fd[kMaxShards], shards;
static uint64_t* ids;
static size_t n_ids, slot_bytes;
static int lanes, zstd_store;
static uint64_t lane_bytes[64];

static uint64_t load_le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

static void* lane_main(void* arg) {
  const int lane = (int)(intptr_t)arg;
  uint8_t* buf = malloc((size_t)kBatch * slot_bytes);
  uint8_t* frame = zstd_store ? malloc(ZSTD_compressBound(slot_bytes)) : NULL;
  ZSTD_DCtx* dctx = zstd_store ? ZSTD_createDCtx() : NULL;
  uint64_t bytes = 0;
  for (size_t first = (size_t)lane * kBatch; first < n_ids; first += (size_t)lanes * kBatch) {
    const size_t end = first + kBatch < n_ids ? first + kBatch : n_ids;
    for (size_t k = first; k < end; ++k) {
      uint8_t loc[16];
      if (pread(meta_fd, loc, 16, 4096 + 16 * (off_t)ids[k]) != 16) { perror("pread meta.zr"); exit(1); }
      const uint64_t offset = load_le(loc, 8), phys = load_le(loc + 8, 4), logic = load_le(loc + 12, 4);
      if (logic > slot_bytes || phys > ZSTD_compressBound(slot_bytes)) {
        fprintf(stderr, "record %llu is larger than a slot\n", (unsigned long long)ids[k]);
        exit(1);
      }
      uint8_t* slot = buf + (k - first) * slot_bytes;
      if (pread(data_fd[ids[k] % shards], zstd_store ? frame : slot, phys, (off_t)offset) != (ssize_t)phys) {
        perror("pread data");
        exit(1);
      }
      if (zstd_store && ZSTD_decompressDCtx(dctx, slot, logic, frame, phys) != logic) {
        fprintf(stderr, "record %llu does not decode\n", (unsigned long long)ids[k]);
        exit(1);
      }
      bytes += logic;
    }
  }
  lane_bytes[lane] = bytes;
  ZSTD_freeDCtx(dctx);
  free(frame);
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 5 && !(argc == 6 && strcmp(argv[5], "zstd") == 0)) {
    fprintf(stderr, "usage: pread_gather STORE IDS LANES SLOT_BYTES [zstd]\n");
    return 2;
  }
  zstd_store = argc == 6;
  char path[4096];
  snprintf(path, sizeof path, "%s/meta.zr", argv[1]);
  if ((meta_fd = open(path, O_RDONLY)) < 0) { perror(path); return 1; }
  for (shards = 0; shards < kMaxShards; ++shards) {
    snprintf(path, sizeof path, "%s/data_%d.zr", argv[1], shards);
    if ((data_fd[shards] = open(path, O_RDONLY)) < 0) break;
  }
  lanes = atoi(argv[3]);
  slot_bytes = strtoull(argv[4], NULL, 10);
  if (lanes < 1 || lanes > 64 || shards == 0) { fprintf(stderr, "bad lanes or store\n"); return 2; }
  FILE* f = fopen(argv[2], "r");
  if (!f) { perror(argv[2]); return 1; }
  size_t cap = 1 << 16;
  ids = malloc(cap * sizeof *ids);
  unsigned long long v;
  while (fscanf(f, "%llu", &v) == 1) {
    if (n_ids == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
    ids[n_ids++] = v;
  }
  fclose(f);
  pthread_t t[64];
  for (int i = 0; i < lanes; ++i) pthread_create(&t[i], NULL, lane_main, (void*)(intptr_t)i);
  uint64_t total = 0;
  for (int i = 0; i < lanes; ++i) pthread_join(t[i], NULL), total += lane_bytes[i];
  printf("%llu\n", (unsigned long long)total);
  return 0;
}
