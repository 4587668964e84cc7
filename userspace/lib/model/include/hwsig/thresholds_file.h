// The one way a command gets its thresholds from a file: read, then parsed
// over the defaults (hwsig/thresholds.h).
#pragma once

#include <string>

#include "hwsig/thresholds.h"

namespace hwsig {

// The thresholds of the file at path. When absent_ok and the file does not
// exist: the defaults. Throws ThresholdError: "cannot read thresholds file
// PATH: REASON", or the parse error naming the file, line and key.
Thresholds load_thresholds_file(const std::string &path, bool absent_ok = false);

} // namespace hwsig
