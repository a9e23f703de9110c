// The bundled default-2022 capture as a Recording, built once per fuzz process: the host the
// stateful targets (fuzz_session, fuzz_admin) serve.
#pragma once
#include <memory>

#include "captures/reader.h"
#include "fuzz/fuzz_input.h"
#include "replayer/recording.h"

namespace perfsim::fuzz {

inline std::shared_ptr<const replayer::Recording> default_recording() {
  static const std::shared_ptr<const replayer::Recording> rec = [] {
    captures::Capture cap;
    require(captures::read_capture(source_path("captures/default-2022.perfcap"), cap).ok());
    std::shared_ptr<const replayer::Recording> r;
    require(replayer::build_recording(std::move(cap), r).ok());
    return r;
  }();
  return rec;
}

}  // namespace perfsim::fuzz
