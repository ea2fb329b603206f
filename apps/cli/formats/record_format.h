// Human and machine text renderings of records for `zrec cat --format text|jsonl`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "zrec/dtype.h"

namespace zrec::cli {

// A record of more than kSummaryThreshold elements printed for a person (cat's text and
// jsonl to a terminal) is summarised as numpy's print does with its defaults (threshold
// 1000, edgeitems 3): each axis longer than 2 * kEdgeItems shows its first and last
// kEdgeItems entries around "..." (jsonl: the string "...", so each line stays JSON).
inline constexpr uint64_t kSummaryThreshold = 1000;
inline constexpr uint64_t kEdgeItems = 3;

// Appends to `out` the elements of one record (C-order `data`, `shape` dims, `dtype`)
// as nested JSON arrays (one level per dimension; a 0-d record is a bare value):
//   bool -> true/false; ints -> decimal; floats (incl. float16) -> shortest round-trip
//   decimal, NaN/Infinity/-Infinity spelled as Python's json module does;
//   complex -> [re, im]; S -> JSON string of the bytes (trailing NULs stripped, bytes
//   >= 0x80 as \u00XX, as latin-1); U -> JSON string (UTF-32 -> UTF-8, trailing NULs
//   stripped; invalid code points -> \uFFFD); V -> hex string; datetime64/timedelta64 ->
//   integer count of the unit (NaT -> null).
// Big-endian dtypes are byte-swapped for display. No trailing newline.
// `summarise`: as above, when the record has more than kSummaryThreshold elements.
void append_json_record(std::string& out, const DType& dtype, std::span<const uint64_t> shape, const uint8_t* data,
                        bool summarise = false);

// Appends a NumPy-like readable rendering: nested brackets, space-separated values,
// e.g. "[[1 2 3]\n [4 5 6]]"; floats shortest round-trip, nan/inf as numpy prints them;
// complex as 1+2j; S as b'..' with Python escapes; U as '..'; V as hex;
// datetime64 as ISO 8601 for units Y..as where representable (e.g. 2024-01-02T03:04:05),
// NaT as NaT; timedelta64 as "<n> <unit>". No trailing newline.
// `summarise` as for append_json_record.
void append_text_record(std::string& out, const DType& dtype, std::span<const uint64_t> shape, const uint8_t* data,
                        bool summarise = false);

// The value of one element at `data` as a double, for bool, integer and float dtypes in
// either byte order (float16 included; integers beyond 2^53 rounded); nullopt for every
// other kind. `zrec view` summarises numeric records with it (min, max, mean, sparkline).
std::optional<double> element_as_double(const DType& dtype, const uint8_t* data);

}  // namespace zrec::cli
