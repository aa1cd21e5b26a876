// Linked into every fuzz target: protobuf's parser logs each string field
// that is not UTF-8, which fuzzed input makes thousands of times a second and
// which only slows the run down (the parse still fails or succeeds as it
// would). Discards protobuf's log messages; FATAL ones still abort.
#include "google/protobuf/stubs/logging.h"

namespace {

const bool kQuiet = [] {
  google::protobuf::SetLogHandler(nullptr);
  return true;
}();

}  // namespace
