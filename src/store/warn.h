// Gives a warning to the sink of the call that met it (zrec/context.h).
#pragma once

#include <string>

#include "zrec/context.h"

namespace zrec::store {

// `sink`'s, or stderr's as "zrec: warning: MESSAGE" when it is empty.
void warn(const WarningSink& sink, const std::string& message);

}  // namespace zrec::store
