// lodctr's inputs: a counter INI and its symbol file (the input holds both, split at the first NUL
// byte), parsed; when both parse, installed into the metadata of the bundled default-2022 capture
// as `perfsim lodctr` does, then uninstalled.
#include <algorithm>

#include "captures/reader.h"
#include "fuzz/fuzz_input.h"
#include "lodctr/ini.h"
#include "lodctr/install.h"

using namespace perfsim;

namespace {

const captures::Capture& host_metadata() {
  static const captures::Capture cap = [] {
    captures::Capture c;
    fuzz::require(captures::read_capture(fuzz::source_path("captures/default-2022.perfcap"), c).ok());
    c.records.clear();  // install works on names and registry values only
    return c;
  }();
  return cap;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView in(data, size);
  const auto nul = std::find(in.begin(), in.end(), uint8_t(0));
  const ByteView ini_bytes(in.begin(), nul);
  const ByteView symbol_bytes = nul == in.end() ? ByteView() : ByteView(nul + 1, in.end());
  (void)lodctr::text_lines(ini_bytes);
  lodctr::CounterIni ini;
  lodctr::Symbols symbols;
  const bool ini_ok = lodctr::parse_ini(ini_bytes, ini).ok();
  if (!lodctr::parse_symbols(symbol_bytes, symbols).ok() || !ini_ok) return 0;
  captures::Capture cap = host_metadata();
  lodctr::InstallReport report;
  if (lodctr::install(cap, ini, symbols, &report).ok()) (void)lodctr::uninstall(cap, ini.driver);
  return 0;
}
