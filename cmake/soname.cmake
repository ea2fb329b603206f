# zrec_soname_of(LIBRARY VAR): VAR = the soname of the shared library file LIBRARY, as
# the linker would record it, for a library zrec loads at run time instead of linking
# (zrec_support/shared_library.h): the loaded library then has the ABI of the headers.
function(zrec_soname_of library var)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${library} OUTPUT_VARIABLE dynamic ERROR_QUIET)
  if(NOT dynamic MATCHES "SONAME +([^ \n]+)")
    message(FATAL_ERROR "zrec: cannot read the soname of ${library}")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()
