# fmt and spdlog, for the CLI, its tests and the fuzz targets (included by CMakeLists.txt).
# Performance note: fmt and spdlog are compiled into the CLI, not loaded as libfmt.so and
# libspdlog.so: those two (and libstdc++.so, which they need) were 2,960 of the dynamic
# loader's 3,200 symbol bindings at the start of every zrec process (docs/bench.md,
# "Process start"). Debian ships no static archive of either, and their header-only forms
# would compile their implementation into every CLI file (63% slower CLI builds), so
# deps/ compiles each library's out-of-line part once and every other file includes
# their headers as it would for the shared libraries. Only the CLI, its tests and the
# fuzz targets link these two; zrec_core uses neither, so the installed libzrec.a carries
# no fmt or spdlog symbol that could clash with a library user's own fmt.
# The packages' include directories and compile definitions (FMT_SHARED,
# SPDLOG_SHARED_LIB: symbol visibility only; SPDLOG_COMPILED_LIB, SPDLOG_FMT_EXTERNAL: as
# Debian's libspdlog.so was built, against the packaged fmt) are kept as they are, so the
# CLI's files compile exactly as against the shared libraries (and hit ccache as before).
find_package(fmt REQUIRED)
set(ZREC_COMPILED_DEPS fmt)
if(ZREC_BUILD_CLI)
  find_package(spdlog REQUIRED)
  list(APPEND ZREC_COMPILED_DEPS spdlog)
endif()
foreach(lib ${ZREC_COMPILED_DEPS})
  get_target_property(ZREC_${lib}_INCLUDES ${lib}::${lib} INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(ZREC_${lib}_DEFINITIONS ${lib}::${lib} INTERFACE_COMPILE_DEFINITIONS)
  add_library(zrec_${lib} STATIC deps/${lib}_impl.cc)
  if(ZREC_${lib}_INCLUDES)
    target_include_directories(zrec_${lib} SYSTEM PUBLIC ${ZREC_${lib}_INCLUDES})
  endif()
  if(ZREC_${lib}_DEFINITIONS)
    target_compile_definitions(zrec_${lib} PUBLIC ${ZREC_${lib}_DEFINITIONS})
  endif()
endforeach()
if(TARGET zrec_spdlog)
  target_link_libraries(zrec_spdlog PUBLIC zrec_fmt Threads::Threads)
endif()
