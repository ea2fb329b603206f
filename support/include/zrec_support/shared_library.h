// Libraries zrec loads when a command first needs them (libcurl for URLs, libarchive for
// tar and zip, zrec view's HTTP server module), not when every process starts: linked,
// each brings libraries of its own into the start of every `zrec info` (docs/bench.md,
// "Process start"). Header-only, so the core (libcurl) uses it as the CLI does.
//
// A library's functions are listed once as an X-macro, X(name), and resolved into a
// table of pointers typed by the library's own headers, loaded on the first call:
//
//   #define LIBFOO_FUNCTIONS(X) X(foo_open) X(foo_close)
//   struct LibFoo { ZREC_SHARED_LIBRARY_TABLE(LibFoo, LIBFOO_FUNCTIONS) };
//   Result<const LibFoo*> libfoo() {
//     return SharedLibrary::load_once<LibFoo>("libfoo.so.1", "libfoo", "foo files need");
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

  // The table of `file`'s functions (a struct of ZREC_SHARED_LIBRARY_TABLE), loaded on
  // the first call for that Table, thread-safe (a function-local static), then passed to
  // `ready`, which may set the library up once (libcurl's global init). Every later call
  // returns the same table, or the same error: the library's, naming `file`, or ready's.
  template <typename Table>
  static Result<const Table*> load_once(const std::string& file, const std::string& name, const std::string& needed_by,
                                        Status (*ready)(const Table&) = nullptr) {
    static const Result<Table> loaded = [&]() -> Result<Table> {
      ZREC_ASSIGN_OR_RETURN(const SharedLibrary lib, open(file, name, needed_by));
      ZREC_ASSIGN_OR_RETURN(Table table, Table::resolve(lib));
      if (ready != nullptr) ZREC_RETURN_IF_ERROR(ready(table));
      return table;
    }();
    if (!loaded.is_ok()) return loaded.status();
    return &loaded.value();
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

// The body of a function table `Table`: one typed pointer per X(name) of LIST, and
// resolve(lib), the table of `lib`'s functions or the error of the first it lacks.
#define ZREC_SHARED_LIBRARY_TABLE(Table, LIST)                             \
  LIST(ZREC_SHARED_LIBRARY_MEMBER)                                         \
  static ::zrec::Result<Table> resolve(const ::zrec::SharedLibrary& lib) { \
    Table table;                                                           \
    LIST(ZREC_SHARED_LIBRARY_RESOLVE)                                      \
    return table;                                                          \
  }
#define ZREC_SHARED_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;
// Resolves X(name) of `lib` into `table.name`, returning the error from the enclosing
// function when the library lacks it.
#define ZREC_SHARED_LIBRARY_RESOLVE(name) \
  { ZREC_ASSIGN_OR_RETURN(table.name, lib.function<decltype(table.name)>(#name)); }
