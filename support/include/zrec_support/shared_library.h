// Libraries zrec loads when a command first needs them (libcurl for URLs, libarchive for
// tar and zip, zrec view's HTTP server module), not when every process starts: linked,
// each brings libraries of its own into the start of every `zrec info` (docs/bench.md,
// "Process start"). Header-only, so the core (libcurl) uses it as the CLI does.
//
// A library's functions are listed once as an X-macro, X(name), and resolved into a
// table of pointers typed by the library's own headers:
//
//   #define LIBFOO_FUNCTIONS(X) X(foo_open) X(foo_close)
//   struct LibFoo { ZREC_SHARED_LIBRARY_MEMBERS(LIBFOO_FUNCTIONS) };
//   Result<LibFoo> load() {
//     ZREC_ASSIGN_OR_RETURN(const SharedLibrary lib, SharedLibrary::open("libfoo.so.1", "libfoo", "foo files need"));
//     LibFoo table;
//     LIBFOO_FUNCTIONS(ZREC_SHARED_LIBRARY_RESOLVE)   // returns the error of a missing function
//     return table;
//   }
//
// The soname to load is the one the linker would record, read from the library at
// configure time (cmake/soname.cmake), so the loaded library has the ABI of the headers.
#pragma once

#include <dlfcn.h>

#include <string>

#include "zrec/status.h"

namespace zrec {

class SharedLibrary {
 public:
  // Loads `file` (a soname, or a path), its symbols local to it. `name` and `needed_by`
  // make the error: "cannot load libcurl (libcurl.so.4), which reading a store by URL
  // needs: <the loader's reason>". A loaded library stays loaded until the process ends.
  static Result<SharedLibrary> open(const std::string& file, const std::string& name, const std::string& needed_by) {
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return unsupported("cannot load " + name + " (" + file + "), which " + needed_by + ": " +
                         (why != nullptr ? why : "unknown reason"));
    }
    return SharedLibrary(handle, name + " (" + file + ")");
  }

  // The function `symbol` as a pointer of type F; an error naming the library if it has none.
  template <typename F>
  Result<F> function(const char* symbol) const {
    void* p = ::dlsym(handle_, symbol);
    if (p == nullptr) return unsupported("cannot load " + shown_ + ": it has no " + symbol);
    return reinterpret_cast<F>(p);
  }

 private:
  SharedLibrary(void* handle, std::string shown) : handle_(handle), shown_(std::move(shown)) {}
  void* handle_;
  std::string shown_;
};

}  // namespace zrec

// The members of a function table: one typed pointer per X(name) of a list.
#define ZREC_SHARED_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;
#define ZREC_SHARED_LIBRARY_MEMBERS(LIST) LIST(ZREC_SHARED_LIBRARY_MEMBER)
// Resolves X(name) of `lib` into `table.name`, returning the error from the enclosing
// function when the library lacks it. Used as LIST(ZREC_SHARED_LIBRARY_RESOLVE) with
// `lib` and `table` in scope.
#define ZREC_SHARED_LIBRARY_RESOLVE(name) \
  { ZREC_ASSIGN_OR_RETURN(table.name, lib.function<decltype(table.name)>(#name)); }
