// The quirk table: one row per quirk of shared/docs/quirks.md, the one place that says what a
// quirk is called, what parameters it takes (names, defaults, ranges), where it acts, how a
// setting is applied and shown back, the Applied bit its answers carry (journal, metrics) and, for
// quirks acting on the call path, its behaviour. `--quirk`, fleet and scenario files, the admin
// API, the journal and metrics, profiles and fingerprints all go through it (quirks.h); README.md's
// quirk table is checked against it (tests/replayer/quirk_table_test.cpp). Which OS rows switch a
// quirk on is said by those rows (windows/os.h), once.
//
// Adding a quirk: a field in `Quirks` (quirks.h) and a row here with its apply, show and, on the
// call path, its behaviour; a quirk that selects objects or rewrites content also needs its
// behaviour where that happens (SimulatedHost::content, content_quirks.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "replayer/quirks.h"

namespace perfsim::replayer {

// Where a quirk acts.
enum class QuirkStage {
  kBuffer,     // the buffer policy: sizes and ERROR_MORE_DATA of perf data (quirk_engine.h)
  kRefuse,     // a perf QueryValue refused before anything is read (quirk_engine.h); access-denied
               // on = open refuses OpenHKPD instead (the winreg service asks the host)
  kAnswer,     // the content edited before the buffer policy sees it (quirk_engine.h)
  kDelay,      // how long the answer takes to leave (quirk_engine.h)
  kSelection,  // which objects an answer holds, and what its header says of them (SimulatedHost::content)
  kContent,    // the host's copy of the capture, rewritten when the host is made (content_quirks.h)
  kTransport,  // the connection: the SMB pipe's open, a TCP association's authentication (server/)
};
std::string_view stage_name(QuirkStage s);

struct QuirkCall;  // quirk_engine.h

struct QuirkRow {
  std::string_view name;
  QuirkStage stage = QuirkStage::kBuffer;
  // Its parameters as README.md's table writes them: "`overhead` (65536)", defaults in brackets.
  std::string_view params_doc;
  std::vector<std::string_view> params;  // the names a setting may give; others are refused
  // Applies one setting of this quirk (on or off, parameters read and range-checked).
  Status (*apply)(Quirks& q, const QuirkSetting& s) = nullptr;
  // The setting that gives back what `q` holds for this quirk ("busy:probability=0.1"), as
  // `--quirk` and PUT .../quirks take it; empty when `q` has it off (and off is the default).
  std::string (*show)(const Quirks& q) = nullptr;
  int applied_bit = -1;  // the Applied bit (answer.h) its answers carry; -1: none
  // The behaviour of a call-path quirk (stages kBuffer, kRefuse, kAnswer, kDelay): does nothing
  // unless `q` has it on; true when it made the answer (kBuffer, kRefuse: the later rows of the
  // stage are skipped).
  bool (*on_call)(const QuirkRow& self, const Quirks& q, QuirkCall& c) = nullptr;
  uint32_t bit() const { return applied_bit < 0 ? 0 : 1u << applied_bit; }
};

// Every row, in the order settings are shown (the admin API) and listed (README.md).
const std::vector<QuirkRow>& quirk_table();
// The row of `name` (exact), or nullptr.
const QuirkRow* find_quirk(std::string_view name);

}  // namespace perfsim::replayer
