// `zrec bench --export DIR`: the generated records as .npy files, so that
// scripts/bench_peers.py writes and gathers exactly the records zrec measured.
//   DIR/<workload>/records.npy   Dense: shape (N, *item_shape)
//   DIR/<workload>/payload.npy   Ragged: every payload back to back, 1-D, the store's dtype
//   DIR/<workload>/offsets.npy   Ragged: <u8, N+1 element offsets into payload.npy
//   DIR/<workload>/shapes.npy    Ragged: <u8, (N, ndim) record shapes
#pragma once

#include <string>

#include "zrec/status.h"

#include "zrec_bench.h"

namespace zrec::cli {

Status export_corpus(const bench::Corpus& corpus, const std::string& dir);

}  // namespace zrec::cli
