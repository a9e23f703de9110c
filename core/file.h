// The one way perfsim reads a whole input file into memory (specs, fault plans, fleet files,
// collect specs, lodctr INI and symbol files, authentication files): a regular file of at most
// `max_bytes`, so `/dev/zero`, a FIFO or a runaway file is refused at once with a message naming
// the file, the limit and what to do, instead of growing the process by gigabytes.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace perfsim {

// Text inputs are hand-written or tool-made: the largest real ones (a lodctr symbol file, a
// fleet of thousands of hosts) are a few hundred KiB, so 16 MiB leaves two orders of magnitude.
inline constexpr size_t kMaxTextInputBytes = size_t(16) << 20;

// The whole file into `out`. `what` names the input in errors ("fault plan", "symbol file").
// Errors: NotFound (no such file), IOError (cannot open it otherwise, or a read failed),
// InvalidArgument (not a regular file: a directory, device, FIFO or socket; or larger than
// `max_bytes`, also when it grew while being read).
Status read_bounded_file(const std::string& path, std::string_view what, std::string& out,
                         size_t max_bytes = kMaxTextInputBytes);

}  // namespace perfsim
