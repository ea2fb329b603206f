// Finds and loads zrec view's HTTP server module (http_transport.h says why it is one).
#pragma once

#include "zrec/status.h"

#include "cli/view/http_transport.h"

namespace zrec::cli::view {

// dlopens zrec-view-http.so from the directory of the running zrec (a build tree) or from
// ZREC_VIEW_MODULE_DIR relative to it (an installed zrec: ../lib/zrec), checks that it was
// built with this kTransportAbi, and returns its serve function. The module stays loaded
// for the life of the process. Errors (kNotFound, kUnsupported) name the paths tried and
// dlerror()'s reason.
Result<ServeFunction> load_http_module();

}  // namespace zrec::cli::view
