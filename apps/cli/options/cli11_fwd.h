// The CLI11 classes zrec's headers name, declared. CLI11 is included only by the .cc
// files that register options, parse or format help: its header costs seconds of
// compiling per file (its validator objects are defined in the header and constructed
// in each including file), so a header includes this instead.
#pragma once

namespace CLI {
class App;
class Option;
class Validator;
class ParseError;
}  // namespace CLI
