// spdlog's out-of-line part, compiled once into zrec instead of loaded from libspdlog.so
// (why: fmt_impl.cc). Debian ships spdlog as a shared library only; its headers, built
// with SPDLOG_COMPILED_LIB as every zrec file is, declare the logger, the registry and
// the sinks and leave their bodies to the *-inl.h headers included here, once.
#ifndef SPDLOG_COMPILED_LIB
#error "spdlog_impl.cc defines what SPDLOG_COMPILED_LIB leaves out of spdlog's headers"
#endif

#include <spdlog/version.h>

// The implementation headers and instantiations below are spdlog 1.x's (its src/*.cpp).
#if SPDLOG_VER_MAJOR != 1
#error "deps/spdlog_impl.cc compiles spdlog 1.x's implementation: update it for this spdlog"
#endif

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/console_globals.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/spdlog-inl.h>

// zrec's own sink (apps/cli/report/console.cc) derives from base_sink<null_mutex>.
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;

// The registry's default logger, which writes to stdout in colour until zrec sets its
// own (setup_logging): spdlog's registry makes it when first used.
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
