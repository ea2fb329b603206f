# cmake --install BUILD --prefix P: the zrec tool, its man pages, shell completion and docs, and
# the core library as a package (headers, libzrec.a, CMake config as zrec::zrec, zrec.pc).
include(CMakePackageConfigHelpers)

if(ZREC_BUILD_CLI)
  install(TARGETS zrec RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # zrec view's HTTP server module, where zrec looks for it (ZREC_VIEW_MODULE_DIR).
  if(ZREC_BUILD_VIEW)
    install(TARGETS zrec_view_http LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/zrec)
  endif()
  # Every man/*.1 page: zrec.1 and one zrec-<cmd>.1 per subcommand.
  install(DIRECTORY man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1")
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/completions/zrec
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/completions/_zrec
          DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
endif()

# The README, the license and all of docs/ (as docs/ beside the README, so its links
# resolve in the installed copy too: tests/cli/test_install.sh follows them), to
# share/doc/zrec. docs/format.md also stays at the top, where earlier releases put it.
install(FILES README.md LICENSE CONTRIBUTING.md docs/format.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB ZREC_DOCS CONFIGURE_DEPENDS docs/*.md docs/*.png)
install(FILES ${ZREC_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The library: public headers, the static core and its exported target.
install(DIRECTORY include/zrec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS zrec_core EXPORT zrecTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(ZREC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/zrec)
install(EXPORT zrecTargets NAMESPACE zrec:: DESTINATION ${ZREC_CMAKE_DIR})
configure_package_config_file(cmake/zrecConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/zrecConfig.cmake
                              INSTALL_DESTINATION ${ZREC_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/zrecConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zrecConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/zrecConfigVersion.cmake
        DESTINATION ${ZREC_CMAKE_DIR})

# pkg-config: the .pc file finds its prefix from where it lies (${pcfiledir}), so the
# package works from whatever --prefix it is installed to.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "zrec.pc needs a relative CMAKE_INSTALL_LIBDIR, not ${CMAKE_INSTALL_LIBDIR}")
endif()
set(ZREC_PC_PREFIX "\${pcfiledir}/..")
string(REPLACE "/" ";" _zrec_libdir_parts "${CMAKE_INSTALL_LIBDIR}")
foreach(_part IN LISTS _zrec_libdir_parts)
  string(APPEND ZREC_PC_PREFIX "/..")
endforeach()
configure_file(cmake/zrec.pc.in ${CMAKE_CURRENT_BINARY_DIR}/zrec.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zrec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
