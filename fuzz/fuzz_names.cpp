// Name tables from outside: a `lodctr /s` backup (selector 0) or a perfc/perfh .dat pair split at
// the first four NUL bytes (selector 1). What parses is written back, read again, compared with
// the original (diff), placed by English name and put into a capture and out again, as
// `perfsim synth --names`, `names export` and `names diff` do.
#include <algorithm>

#include "fuzz/fuzz_input.h"
#include "names/backup.h"
#include "names/diff.h"
#include "names/place.h"

using namespace perfsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ByteView in(data + 1, size - 1);
  names::NameSet set;
  if (data[0] % 2 == 0) {
    std::vector<std::string> warnings;
    if (!names::parse_backup(in, set, &warnings).ok()) return 0;
  } else {
    const uint8_t sep[4] = {0, 0, 0, 0};
    const auto cut = std::search(in.begin(), in.end(), sep, sep + 4);
    const ByteView counter(in.begin(), cut);
    const ByteView help = cut == in.end() ? ByteView() : ByteView(cut + 4, in.end());
    set.languages.emplace_back();
    if (!names::parse_dat(counter, help, "009", set.languages.back()).ok()) return 0;
  }
  names::NameSet again;
  if (names::parse_backup(names::write_backup(set), again).ok()) (void)names::diff(set, again);
  std::vector<names::Wanted> wanted;
  if (const names::Strings* en = set.find("009"))
    for (const auto& [index, text] : en->text)
      if (wanted.size() < 64) wanted.push_back({index, text, "Svc", ""});
  std::map<uint32_t, uint32_t> placed;
  (void)names::place(set, wanted, placed);
  captures::Capture cap;
  names::to_capture(set, cap);
  (void)names::diff(set, names::from_capture(cap));
  return 0;
}
