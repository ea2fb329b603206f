// The query parameters of `zrec view`'s API, parsed strictly: numbers are plain decimal
// within a stated range, a record ID is one index in cat's SELECTION syntax (so -1 is the
// last record), and anything else is kInvalidArgument with a message naming the
// parameter, which the API answers with 400.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zrec/status.h"

#include "cli/view/http_transport.h"

namespace zrec::cli::view {

// Parameter `name` as an integer in [min, max]; `fallback` when absent (nullopt: required).
Result<uint64_t> uint_param(const HttpRequest& request, const char* name, std::optional<uint64_t> fallback,
                            uint64_t min, uint64_t max);

// Parameter `name` when present and not empty, as an integer in [min, max].
Result<std::optional<uint64_t>> optional_uint_param(const HttpRequest& request, const char* name, uint64_t min,
                                                    uint64_t max);

// Parameter `name` as one record of a store of `length` records: "7", "-1" (cat's
// parser; "index 12 is out of range for a store of 10 records" past the end).
Result<uint64_t> id_param(const HttpRequest& request, const char* name, uint64_t length);

}  // namespace zrec::cli::view
