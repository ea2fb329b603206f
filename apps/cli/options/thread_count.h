// The one rule for a worker-lane count, shared by --threads and ZREC_THREADS so that
// both accept the same values and refuse the others in the same words:
//
//   thread_count_problem("4")   -> ""                                        (valid)
//   thread_count_problem("0")   -> "'0' is not a whole number from 1 to 1024"
//   app.add_option("--threads", n)->check(thread_count_check());
//   threads_from_environment()  -> 0 when ZREC_THREADS is unset or empty, its value when
//                                  valid, a usage error naming ZREC_THREADS otherwise
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "zrec/status.h"

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

inline constexpr size_t kMaxThreadCount = 1024;

// "" when `text` is a whole number from 1 to kMaxThreadCount (digits only: no sign,
// spaces or fraction), else the problem, quoting the value.
std::string thread_count_problem(std::string_view text);

// thread_count_problem as a CLI11 check; CLI11 prefixes the option's name.
CLI::Validator thread_count_check();

// ZREC_THREADS: 0 when it is unset or empty (the CPU-based default applies), its value
// when valid; otherwise a usage error "ZREC_THREADS: '0' is not a whole number from 1 to
// 1024". Checked whenever it is set, even when --threads overrides it, as man zrec(1) says.
Result<size_t> threads_from_environment();

}  // namespace zrec::cli
