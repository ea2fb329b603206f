# The tests (included by CMakeLists.txt with ZREC_BUILD_TESTS).
# Every test has one tier, a CTest label (scripts/test.sh runs them by label; README.md,
# "Tests", says how long each takes):
#   unit     doctest cases and fuzz-corpus replays, in-process, seconds in all
#   cli      the zrec binary driven as a user drives it, with real third-party clients
#   process  process behaviour: timing, signals, peak RSS, installs, docs and help text
#   slow     a live Slurm cluster, a browser, kill loops and fault injection
# `scripts/test.sh fast` runs unit and cli; `scripts/test.sh` runs all four, then the
# sanitized pass (all but the tests labelled release-only, below), TSan and fuzzing.
enable_testing()
find_package(doctest REQUIRED)
include(doctest)

# Unit tests, two binaries (tests/unit/): zrec_core_tests holds the library's tests and
# those of the CLI's layers without CLI11 (formats, the record window), so it builds
# without the CLI and is what the ThreadSanitizer pass runs (every concurrency test of
# the executor is in it); zrec_cli_tests holds the rest, which link the CLI.
add_library(zrec_test_main STATIC tests/unit/main.cc tests/unit/testutil.cc)
target_include_directories(zrec_test_main PUBLIC tests/unit)
target_link_libraries(zrec_test_main PUBLIC zrec_core doctest::doctest PRIVATE zrec_warnings)
function(zrec_unit_tests target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE zrec_test_main zrec_internal ${ZREC_ZSTD} zrec_warnings)
  target_precompile_headers(${target} PRIVATE <doctest/doctest.h> <string> <vector>)
  doctest_discover_tests(${target} PROPERTIES LABELS unit)
endfunction()

file(GLOB ZREC_CORE_TEST_SOURCES CONFIGURE_DEPENDS tests/unit/core/*_test.cc)
zrec_unit_tests(zrec_core_tests ${ZREC_CORE_TEST_SOURCES})
target_link_libraries(zrec_core_tests PRIVATE zrec_support zrec_bench zrec_cli_formats zrec_cli_window)
target_include_directories(zrec_core_tests PRIVATE bench)  # bench_test.cc: bench_internal.h
# endian_test.cc proves format/endian.h compiles alone, which a PCH would hide.
set_source_files_properties(tests/unit/core/endian_test.cc PROPERTIES SKIP_PRECOMPILE_HEADERS ON
                                                                      SKIP_UNITY_BUILD_INCLUSION ON)

if(ZREC_BUILD_CLI)
  file(GLOB ZREC_CLI_TEST_SOURCES CONFIGURE_DEPENDS tests/unit/cli/*_test.cc)
  if(ZREC_BUILD_VIEW)
    file(GLOB ZREC_VIEW_TEST_SOURCES CONFIGURE_DEPENDS tests/unit/view/*_test.cc)
  endif()
  zrec_unit_tests(zrec_cli_tests ${ZREC_CLI_TEST_SOURCES} ${ZREC_VIEW_TEST_SOURCES})
  target_link_libraries(zrec_cli_tests PRIVATE zrec_cli)
  if(ZREC_BUILD_VIEW)
    target_link_libraries(zrec_cli_tests PRIVATE zrec_png)  # png_writer_test.cc decodes with libpng's reader
  endif()
endif()

if(NOT ZREC_BUILD_CLI)
  return()
endif()
# Script tests drive the built binary with real third-party clients (NumPy, zstd CLI).
file(GLOB ZREC_SCRIPT_TESTS CONFIGURE_DEPENDS tests/cli/test_*.sh tests/cli/test_*.py)
if(NOT ZREC_BUILD_VIEW)
  list(FILTER ZREC_SCRIPT_TESTS EXCLUDE REGEX "/test_view[^/]*$")
endif()
# The longest suites start first under `ctest -j`, so none of them is left running alone
# at the end (CTest learns costs from earlier runs, which a fresh CI machine has not had).
set(ZREC_HEAVY_TESTS test_exactly_once test_fault_inject test_fault_kill test_interop_roundtrip test_malformed_store
    test_process_boundary test_publish_faults test_slurm test_slurm_join test_slurm_names test_verify test_import_memory
    test_view)
# The tiers of the script tests: each one not named here is "cli".
set(ZREC_SLOW_TESTS test_slurm test_slurm_join test_slurm_names test_view_browser test_exactly_once test_fault_kill
    test_fault_inject test_publish_faults test_compress_kill test_manifest_kill test_million_records test_sync_kills)
set(ZREC_PROCESS_TESTS test_bench_smoke test_install test_locking test_memory_bound test_pipeline_interrupt
    test_progress test_verify_memory test_diff_memory test_import_memory test_view_load test_view_names_memory test_process_start
    test_resume_script)
# Tests whose subject is process behaviour (timing, signals, kills, peak RSS, a live
# cluster, builds against the installed package, text of docs and help) also get the label
# "release-only": an ASan build changes what they measure without checking anything more
# in the code they reach, which the other suites already run under ASan. scripts/test.sh
# runs them in the Release pass only.
set(ZREC_RELEASE_ONLY_TESTS test_bench_smoke test_compress_kill test_docs test_exactly_once test_fault_kill test_help
    test_format test_install test_layering test_locking test_manifest_kill test_memory_bound
    test_million_records test_pipeline_interrupt test_progress test_slurm test_slurm_join test_slurm_names
    test_sync_kills test_verify_memory test_diff_memory test_import_memory test_view_browser test_view_load test_view_names_memory test_process_start)
# Tests that start the live Slurm cluster (fixed TCP ports 6817/6818) never run at once.
set(ZREC_SLURM_TESTS test_slurm test_slurm_join test_slurm_names)
foreach(script ${ZREC_SCRIPT_TESTS})
  get_filename_component(name ${script} NAME_WE)
  if(script MATCHES "\\.py$")
    add_test(NAME cli.${name} COMMAND /usr/bin/python3 ${script})
  else()
    add_test(NAME cli.${name} COMMAND bash ${script})
  endif()
  # Sanitized runs tell scripts so (a peak-RSS check means nothing under ASan).
  set_tests_properties(cli.${name} PROPERTIES
                       ENVIRONMENT "ZREC=$<TARGET_FILE:zrec>;ZREC_SANITIZED=$<BOOL:${ZREC_SANITIZE}>"
                       TIMEOUT 600)
  if(name IN_LIST ZREC_HEAVY_TESTS)
    set_tests_properties(cli.${name} PROPERTIES COST 1000)
  endif()
  if(name IN_LIST ZREC_SLOW_TESTS)
    set(tier slow)
  elseif(name IN_LIST ZREC_PROCESS_TESTS)
    set(tier process)
  else()
    set(tier cli)
  endif()
  if(name IN_LIST ZREC_RELEASE_ONLY_TESTS)
    list(APPEND tier release-only)
  endif()
  set_tests_properties(cli.${name} PROPERTIES LABELS "${tier}")
  if(name IN_LIST ZREC_SLURM_TESTS)
    set_tests_properties(cli.${name} PROPERTIES RESOURCE_LOCK slurm-cluster-ports)
  endif()
endforeach()

