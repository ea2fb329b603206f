# The zrec command-line tool: its dependencies, its libraries and the executable
# (included by CMakeLists.txt with ZREC_BUILD_CLI).
find_package(CLI11 REQUIRED)
find_package(LibArchive REQUIRED)  # append-tar, cat --format tar: loaded at run time
# The soname the linker would have recorded, which apps/cli/os/libarchive_api.cc loads.
zrec_soname_of(${LibArchive_LIBRARIES} ZREC_LIBARCHIVE_SONAME)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LMDB REQUIRED IMPORTED_TARGET lmdb)  # append-lmdb
find_library(LMDB_STATIC_LIBRARY liblmdb.a HINTS ${LMDB_LIBRARY_DIRS})
add_library(zrec_lmdb INTERFACE)
if(LMDB_STATIC_LIBRARY)
  target_include_directories(zrec_lmdb SYSTEM INTERFACE ${LMDB_INCLUDE_DIRS})
  target_link_libraries(zrec_lmdb INTERFACE ${LMDB_STATIC_LIBRARY} Threads::Threads)
else()
  target_link_libraries(zrec_lmdb INTERFACE PkgConfig::LMDB)
endif()
pkg_check_modules(HDF5 REQUIRED IMPORTED_TARGET hdf5)  # append-h5 (Debian: hdf5.pc of libhdf5-dev, serial)
# Performance note: append-h5 links the static libhdf5 that libhdf5-dev ships, where
# there is one. The shared one loads 36 more libraries (curl, Kerberos, LDAP, GnuTLS,
# ICU... for HDF5's S3 driver) at the start of every zrec process, whatever the
# subcommand: 11 ms of the 27 ms a `zrec --version` took. Statically only the parts
# append-h5 calls come in, and they need zlib and libsz (libaec), which libhdf5-dev
# depends on.
find_library(HDF5_STATIC_LIBRARY libhdf5.a HINTS ${HDF5_LIBRARY_DIRS} NO_DEFAULT_PATH)
find_library(ZREC_SZIP_LIBRARY NAMES libsz.a sz)
find_library(ZREC_AEC_LIBRARY NAMES libaec.a aec)  # what libsz calls
find_library(ZREC_ZLIB_STATIC_LIBRARY libz.a)
if(ZREC_ZLIB_STATIC_LIBRARY)
  set(ZLIB_USE_STATIC_LIBS TRUE)
  foreach(cached ZLIB_LIBRARY ZLIB_LIBRARY_RELEASE ZLIB_LIBRARY_DEBUG)
    if(${cached} AND NOT ${cached} MATCHES "\\.a$")
      unset(${cached} CACHE)
    endif()
  endforeach()
endif()
find_package(ZLIB)
add_library(zrec_hdf5 INTERFACE)
# append-h5 decodes gzip and bzip2 chunks itself, with a bound (apps/cli/import/
# h5_bounded_filters.h): zlib (which libhdf5 needs anyway) and libbz2, statically where
# libbz2-dev ships the archive, so that no zrec process loads one more library at start.
find_library(ZREC_BZ2_STATIC_LIBRARY libbz2.a)
if(ZREC_BZ2_STATIC_LIBRARY)
  target_link_libraries(zrec_hdf5 INTERFACE ${ZREC_BZ2_STATIC_LIBRARY})
else()
  find_package(BZip2 REQUIRED)
  target_link_libraries(zrec_hdf5 INTERFACE BZip2::BZip2)
endif()
if(NOT ZLIB_FOUND)
  message(FATAL_ERROR "zrec: append-h5 needs zlib (Debian: zlib1g-dev)")
endif()
target_link_libraries(zrec_hdf5 INTERFACE ZLIB::ZLIB)
if(HDF5_STATIC_LIBRARY AND ZREC_SZIP_LIBRARY AND ZREC_AEC_LIBRARY AND ZLIB_FOUND)
  # An imported target, so that CMake places what libhdf5.a calls (zlib, libsz) after it
  # on every link line, also where zlib is linked earlier for libpng.
  add_library(zrec_hdf5_static STATIC IMPORTED)
  set_target_properties(zrec_hdf5_static PROPERTIES IMPORTED_LOCATION ${HDF5_STATIC_LIBRARY}
                        INTERFACE_LINK_LIBRARIES "${ZREC_SZIP_LIBRARY};${ZREC_AEC_LIBRARY};ZLIB::ZLIB;${CMAKE_DL_LIBS};m")
  target_include_directories(zrec_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
  target_link_libraries(zrec_hdf5 INTERFACE zrec_hdf5_static)
else()
  message(STATUS "zrec: no static libhdf5; every zrec process loads the shared one")
  target_link_libraries(zrec_hdf5 INTERFACE PkgConfig::HDF5)
endif()
# --- CLI: everything but main.cc in a library so tests can drive it in-process -------
# apps/cli/ holds main, the command table and the commands; app/ the app's plumbing
# (parsing, help, errors); options/ the option helpers; os/ the glue to the system
# (signals, pipes, libarchive); import/ the append commands and what only they use (but
# the record window, zrec_cli_window in CMakeLists.txt); report/ output and reporting
# (docs/architecture.md).
file(GLOB ZREC_CLI_SOURCES CONFIGURE_DEPENDS apps/cli/*.cc apps/cli/app/*.cc apps/cli/options/*.cc apps/cli/os/*.cc
     apps/cli/import/*.cc apps/cli/report/*.cc apps/cli/diff/*.cc apps/cli/roots/*.cc
     apps/cli/sync/*.cc)
list(REMOVE_ITEM ZREC_CLI_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/apps/cli/main.cc
     ${CMAKE_CURRENT_SOURCE_DIR}/apps/cli/import/record_window.cc
     ${CMAKE_CURRENT_SOURCE_DIR}/apps/cli/import/expansion_check.cc)
# The description and examples each `zrec [<command>] --help` ends with, copied from the
# paragraphs and lines its man page marks (apps/cli/app/help_text.h), so help and man say the
# same thing.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
file(GLOB ZREC_MAN_PAGES CONFIGURE_DEPENDS man/zrec*.1)
add_custom_command(OUTPUT help_text.cc
                   COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/cmake/help_from_man.py
                           help_text.cc ${ZREC_MAN_PAGES}
                   DEPENDS ${ZREC_MAN_PAGES} cmake/help_from_man.py
                   COMMENT "Copying the --help descriptions and examples from the man pages" VERBATIM)
add_library(zrec_cli STATIC ${ZREC_CLI_SOURCES} ${CMAKE_CURRENT_BINARY_DIR}/help_text.cc)
target_link_libraries(zrec_cli PUBLIC zrec_core zrec_cli_formats zrec_cli_window zrec_bench CLI11::CLI11 zrec_fmt
                                      zrec_spdlog
                      PRIVATE ${ZREC_ZSTD} zrec_lmdb zrec_hdf5 ${CMAKE_DL_LIBS} zrec_warnings)
target_compile_definitions(zrec_cli PRIVATE ZREC_VERSION="${PROJECT_VERSION}")
target_include_directories(zrec_cli SYSTEM PRIVATE ${LibArchive_INCLUDE_DIRS})
set_source_files_properties(apps/cli/os/libarchive_api.cc PROPERTIES
                            COMPILE_DEFINITIONS ZREC_LIBARCHIVE_SONAME="${ZREC_LIBARCHIVE_SONAME}")
# Not CLI11's header: it costs seconds of compiling per file, and every file including it
# constructs its validator objects when the process starts (one .init_array entry each), so
# only the files that register options, parse or format help include it (commands.h).
target_precompile_headers(zrec_cli PRIVATE <fmt/format.h> <spdlog/spdlog.h> <string> <vector>)
# Its files compile in batches (CMAKE_UNITY_BUILD, CMakeLists.txt), so those that
# register options share one copy of CLI11's inline code (and fmt's, spdlog's). (Files
# with definitions of their own, libarchive_api.cc, app.cc, http_module.cc, compile alone.)

# --- zrec view (ZREC_BUILD_VIEW): its pages, API and renderers in zrec_view (the front
# end's static files are compiled in: cmake/embed_assets.cmake); its HTTP server is the
# module below. commands.cc lists the command only where it is built (ZREC_WITH_VIEW).
if(ZREC_BUILD_VIEW)
  # zrec view: an HTTP server and PNG encoding. Debian's cpp-httplib is a shared library that
  # runs OpenSSL's initialisation when loaded, so the server is a module that only `zrec view`
  # loads (apps/cli/view/http_transport.h). libpng is linked statically where libpng-dev
  # ships the archive: the shared one would be one more library every zrec process loads.
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # Debian: libcpp-httplib-dev
  find_library(PNG_STATIC_LIBRARY libpng16.a)
  add_library(zrec_png INTERFACE)
  if(PNG_STATIC_LIBRARY AND ZLIB_FOUND)
    add_library(zrec_png_static STATIC IMPORTED)  # (as zrec_hdf5_static: zlib after it)
    set_target_properties(zrec_png_static PROPERTIES IMPORTED_LOCATION ${PNG_STATIC_LIBRARY}
                          INTERFACE_LINK_LIBRARIES "ZLIB::ZLIB;m")
    target_link_libraries(zrec_png INTERFACE zrec_png_static)
  else()
    message(STATUS "zrec: no static libpng; every zrec process loads the shared one")
    find_package(PNG REQUIRED)
    target_link_libraries(zrec_png INTERFACE PNG::PNG)
  endif()

  file(GLOB ZREC_VIEW_SOURCES CONFIGURE_DEPENDS apps/cli/view/*.cc)
  file(GLOB ZREC_VIEW_ASSETS CONFIGURE_DEPENDS apps/cli/view/assets/*)
  add_custom_command(OUTPUT view_assets.cc
                     COMMAND ${CMAKE_COMMAND} -DOUTPUT=view_assets.cc
                             -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/apps/cli/view/assets
                             -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_assets.cmake
                     DEPENDS ${ZREC_VIEW_ASSETS} cmake/embed_assets.cmake
                     COMMENT "Embedding zrec view's static files" VERBATIM)
  add_library(zrec_view STATIC ${ZREC_VIEW_SOURCES} ${CMAKE_CURRENT_BINARY_DIR}/view_assets.cc)
  target_precompile_headers(zrec_view PRIVATE <fmt/format.h> <string> <vector>)
  target_link_libraries(zrec_view PUBLIC zrec_cli PRIVATE zrec_png ${CMAKE_DL_LIBS} zrec_warnings)
  target_link_libraries(zrec_cli PUBLIC zrec_view)  # app.cc's register_view (a cycle CMake links twice)
  set_source_files_properties(apps/cli/commands.cc PROPERTIES COMPILE_DEFINITIONS ZREC_WITH_VIEW=1)
  # Where an installed zrec finds zrec-view-http.so: relative to its own directory (a
  # build tree keeps the two side by side).
  file(RELATIVE_PATH ZREC_VIEW_MODULE_DIR ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
       ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/zrec)
  set_source_files_properties(apps/cli/view/http_module.cc PROPERTIES
                              COMPILE_DEFINITIONS ZREC_VIEW_MODULE_DIR="${ZREC_VIEW_MODULE_DIR}")
  target_compile_definitions(zrec_view PRIVATE ZREC_VERSION="${PROJECT_VERSION}")

  # zrec view's HTTP server, loaded by `zrec view` alone (apps/cli/view/http_transport.h):
  # build/zrec-view-http.so next to build/zrec, installed to LIBDIR/zrec/.
  file(GLOB ZREC_VIEW_HTTP_SOURCES CONFIGURE_DEPENDS apps/cli/view/transport/*.cc)
  add_library(zrec_view_http MODULE ${ZREC_VIEW_HTTP_SOURCES})
  set_target_properties(zrec_view_http PROPERTIES PREFIX "" OUTPUT_NAME zrec-view-http CXX_VISIBILITY_PRESET hidden)
  target_include_directories(zrec_view_http PRIVATE apps)
  target_link_libraries(zrec_view_http PRIVATE PkgConfig::HTTPLIB Threads::Threads zrec_warnings)
endif()

add_executable(zrec apps/cli/main.cc)
target_link_libraries(zrec PRIVATE zrec_cli zrec_warnings)
# HDF5 filter plugins (lzf, blosc, lz4, bzip2, zfp: Debian's hdf5-plugin-lzf and
# hdf5-filter-plugin*) call the HDF5 API of the process that loads them. With the static
# libhdf5 the executable exports that API (cmake/hdf5_plugins.list), and links in the
# calls the plugins make that zrec itself does not (-u), so that libhdf5 finds and runs
# them on its default plugin path and on HDF5_PLUGIN_PATH. (Exporting costs no start
# time measurable by tests/cli/test_process_start.py: nothing binds to them until a
# plugin is loaded.)
if(TARGET zrec_hdf5_static)
  set(ZREC_HDF5_PLUGIN_API H5Epush1 H5Epush2 H5Pexist H5Pget H5Pget_chunk H5Pget_filter_by_id2 H5Pmodify_filter
      H5Sget_simple_extent_dims H5Tclose H5Tconvert H5Tget_class H5Tget_native_type H5Tget_order H5Tget_size
      H5Tget_super H5Zregister H5allocate_memory H5free_memory H5open)
  foreach(symbol ${ZREC_HDF5_PLUGIN_API})
    target_link_options(zrec PRIVATE "LINKER:-u,${symbol}")
  endforeach()
  target_link_options(zrec PRIVATE "LINKER:--dynamic-list=${CMAKE_CURRENT_SOURCE_DIR}/cmake/hdf5_plugins.list")
  set_property(TARGET zrec APPEND PROPERTY LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/hdf5_plugins.list)
endif()
# With fmt and spdlog compiled in, libstdc++.so and libgcc_s.so were the last C++ shared
# libraries a start loaded: linked statically, zrec loads libc and libm alone. Not under
# the sanitizers, whose runtimes need the shared ones. zrec-view-http.so, which only
# `zrec view` loads, still brings libstdc++.so: the strings and vectors of
# http_transport.h cross between the two copies, allocated and freed with the one malloc.
if(NOT (ZREC_SANITIZE OR ZREC_TSAN OR ZREC_FUZZ))
  target_link_options(zrec PRIVATE -static-libstdc++ -static-libgcc)
endif()

if(ZREC_BUILD_VIEW)
  add_dependencies(zrec zrec_view_http)
endif()

# Shell completion scripts, generated from the CLI definition by the hidden
# 'zrec completion bash|zsh', so new subcommands and flags are completed without edits.
add_custom_command(OUTPUT completions/zrec completions/_zrec
                   COMMAND ${CMAKE_COMMAND} -E make_directory completions
                   COMMAND zrec completion bash > completions/zrec
                   COMMAND zrec completion zsh > completions/_zrec
                   DEPENDS zrec
                   COMMENT "Generating bash and zsh completion for zrec")
add_custom_target(zrec_completions ALL DEPENDS completions/zrec completions/_zrec)

# --- Slurm job scripts (docs/scale-out.md): share/zrec/slurm/, the driver also in bin/ ---
install(DIRECTORY scripts/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/zrec/slurm USE_SOURCE_PERMISSIONS)
# The driver finds its job scripts next to its resolved path, so bin/ gets a link to it,
# relative (../share/zrec/slurm/zrec-slurm-build): a prefix moved elsewhere, or staged with
# DESTDIR, still resolves it.
file(RELATIVE_PATH ZREC_SLURM_LINK "/prefix/${CMAKE_INSTALL_BINDIR}"
     "/prefix/${CMAKE_INSTALL_DATADIR}/zrec/slurm/zrec-slurm-build")
install(CODE "file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  file(CREATE_LINK \"${ZREC_SLURM_LINK}\"
       \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/zrec-slurm-build\" SYMBOLIC)")

