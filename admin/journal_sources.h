// The admin API's journal endpoints and /metrics over a serve run's journal/ recorder.
#pragma once
#include <memory>

#include "admin/api.h"
#include "journal/recorder.h"

namespace perfsim::admin {

// /metrics always (the recorder's metrics follow /metrics' own lines); /api/journal, DELETE
// /api/journal and /api/sessions only when the recorder keeps a journal (--journal-size > 0),
// else they stay 503 "journal not enabled". `since` is the first event seq the client wants.
AdminSources journal_sources(std::shared_ptr<journal::Recorder> recorder);

}  // namespace perfsim::admin
