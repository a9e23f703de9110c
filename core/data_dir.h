// Where perfsim's read-only data (the bundled captures, the dashboard's page) is found at run time.
// A build tree runs in place with the source tree's folders compiled in; `cmake --install` copies
// them to PREFIX/share/perfsim, next to PREFIX/bin/perfsim, and the installed binary must find
// them there even after the source tree is gone.
#pragma once

#include <string>
#include <string_view>

namespace perfsim {

// The folder `sub` of perfsim's data, the first of these that is a directory:
//   $PERFSIM_DATA_DIR/sub                  (a packager's or user's override)
//   DIR_OF_EXECUTABLE/../share/perfsim/sub (the `cmake --install` layout)
//   built_in                               (the source tree's folder, compiled in)
// built_in is returned when none exists, so the caller's "not found" names the build's path.
std::string data_dir(std::string_view sub, std::string_view built_in);

}  // namespace perfsim
