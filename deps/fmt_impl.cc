// fmt's out-of-line part, compiled once into zrec instead of loaded from libfmt.so.
//
// Why: a zrec process that loads libfmt.so and libspdlog.so also loads libstdc++.so, and
// the dynamic loader's symbol lookups for those three were most of the instructions of a
// `zrec info` (docs/bench.md, "Process start"). Debian ships fmt as a shared library
// only (no libfmt.a), and compiling fmt header-only (FMT_HEADER_ONLY) would compile this
// part again in every file that formats. So every other file includes <fmt/format.h> as
// a user of the compiled library does, and this file alone defines what that header
// declares but leaves to the library: format-inl.h's functions, and the templates whose
// bodies live only there, instantiated for the types fmt's headers use them with.
#include <locale>

#include <fmt/format-inl.h>

// The templates below are fmt 9's; another major version names its own (its src/format.cc).
#if FMT_VERSION < 90000 || FMT_VERSION >= 100000
#error "deps/fmt_impl.cc instantiates fmt 9's out-of-line templates: update it for this fmt"
#endif

FMT_BEGIN_NAMESPACE
namespace detail {

// Shortest round-trip conversion of binary floating point (Dragonbox): every {} of a
// float or double.
template auto dragonbox::to_decimal<float>(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal<double>(double x) noexcept -> dragonbox::decimal_fp<double>;

// The locale a format with the L flag or a locale argument reads its separators from.
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl<char>(locale_ref loc) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref loc) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl<char>(locale_ref loc) -> char;
template auto decimal_point_impl<wchar_t>(locale_ref loc) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
