// The quirk table against its documentation and its own inverse: README.md's table lists the rows
// in order with their stage, parameters and the OS profiles that switch them on (read from
// windows/os.h, not from the table); every setting the admin API shows reads back as the same
// quirks; each call-path row marks its answers with its own Applied bit.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"
#include "replayer/answer.h"
#include "replayer/fleet_file.h"
#include "replayer/host.h"
#include "replayer/quirk_table.h"
#include "replayer/quirks.h"
#include "tests/common/test_capture.h"
#include "windows/os.h"

using namespace perfsim;
using namespace perfsim::replayer;

namespace {

// The rows of README.md's "## Quirks" table, each as its cells.
std::vector<std::vector<std::string>> readme_quirk_rows() {
  std::ifstream in(std::string(PERFSIM_SOURCE_DIR) + "/replayer/README.md");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool in_section = false, in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Quirks";
    if (!in_section) continue;
    if (line.rfind("| quirk |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') break;
    std::vector<std::string> cells;
    std::string inner = line.substr(1, line.size() - 2), cell;
    std::istringstream cs(inner);
    while (std::getline(cs, cell, '|')) cells.push_back(trim(cell));
    rows.push_back(cells);
  }
  return rows;
}

std::string profiles_with(std::string_view quirk) {
  std::string out;
  for (const windows::OsProfile& os : windows::os_profiles())
    if (windows::has_quirk(os, quirk)) out += (out.empty() ? "" : ", ") + std::string(os.name);
  return out;
}

}  // namespace

TEST_CASE("README.md's quirk table lists every row of the quirk table with its stage and parameters") {
  const auto rows = readme_quirk_rows();
  const std::vector<QuirkRow>& table = quirk_table();
  REQUIRE(rows.size() == table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    INFO("row " << i << ": " << table[i].name);
    REQUIRE(rows[i].size() >= 5);
    CHECK(rows[i][0] == "`" + std::string(table[i].name) + "`");
    CHECK(rows[i][1] == stage_name(table[i].stage));
    CHECK(rows[i][2] == table[i].params_doc);
    CHECK(rows[i][3] == profiles_with(table[i].name));
    CHECK_FALSE(rows[i][4].empty());
    for (std::string_view p : table[i].params)
      CHECK(table[i].params_doc.find("`" + std::string(p) + "`") != std::string_view::npos);
  }
}

TEST_CASE("every quirk an OS profile names is a row of the quirk table") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    INFO(os.name);
    CHECK(find_quirk(os.more_data) != nullptr);
    CHECK(find_quirk(os.more_data)->stage == QuirkStage::kBuffer);
    for (std::string_view q : os.quirks) CHECK(find_quirk(q) != nullptr);
  }
}

TEST_CASE("the settings shown for a host read back as the same quirks") {
  for (const QuirkRow& row : quirk_table()) {
    INFO(row.name);
    Quirks q;
    // The two quirks that have no default for what they act on.
    std::map<std::string, std::string> params;
    if (row.name == "provider-timeout") params = {{"provider", "PerfDisk,PerfNet"}};
    if (row.name == "counter-type-change") params = {{"counter", "200"}, {"type", "0x00010500"}};
    REQUIRE(apply_setting(q, QuirkSetting{std::string(row.name), true, params}).ok());
    const std::vector<std::string> shown = quirk_settings(q);
    // The row shows itself when on (the buffer default rrp-exact too).
    bool found = false;
    for (const std::string& s : shown) found = found || s.rfind(std::string(row.name), 0) == 0;
    CHECK(found);
    Quirks back;
    for (const std::string& s : shown) {
      QuirkSetting setting;
      REQUIRE(parse_quirk_arg(s, setting).ok());
      REQUIRE(apply_setting(back, setting).ok());
    }
    CHECK(quirk_settings(back) == shown);
  }
  Quirks off;
  REQUIRE(apply_setting(off, QuirkSetting{"extra-objects", false, {}}).ok());
  const std::vector<std::string> shown = quirk_settings(off);
  CHECK(std::find(shown.begin(), shown.end(), "extra-objects=off") != shown.end());
}

TEST_CASE("applied bits are one per row below the fault bits and name their quirk") {
  std::set<int> bits;
  for (const QuirkRow& row : quirk_table()) {
    if (row.applied_bit < 0) continue;
    INFO(row.name);
    CHECK(bits.insert(row.applied_bit).second);
    CHECK(uint32_t(row.applied_bit) < kAppliedFaultBase);
    CHECK(applied_name(row.bit()) == row.name);
  }
  // Every call-path behaviour marks what it did.
  for (const QuirkRow& row : quirk_table())
    if (row.on_call) CHECK(row.applied_bit >= 0);
  CHECK(applied_name(1u << kAppliedFaultBase) == "fault:latency");
  CHECK(applied_names((1u << 5) | (1u << 8)) == "busy,slow-global");
}

TEST_CASE("an unknown quirk is refused with the names the table knows") {
  Quirks q;
  const Status s = apply_setting(q, QuirkSetting{"busyy", true, {}});
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("unknown quirk 'busyy'") != std::string::npos);
  CHECK(s.message().find("access-denied, busy, transient-error") != std::string::npos);
  const Status p = apply_setting(q, QuirkSetting{"busy", true, {{"evry", "2"}}});
  CHECK(p.message().find("unknown parameter 'evry'") != std::string::npos);
}

TEST_CASE("transient-error answers every Nth perf query with the error .NET retries") {
  HostOptions opt{TimelineMode::kFrozen, 0};
  QuirkSetting s;
  REQUIRE(parse_quirk_arg("transient-error:code=258,every=3", s).ok());
  REQUIRE(apply_setting(opt.quirks, s).ok());
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(testing::test_capture(), opt, h).ok());
  for (int i = 1; i <= 6; ++i) {
    const ValueAnswer a = h->query(PerfKey::kData, "Global", BufferOffer{true, 1u << 24});
    INFO("call " << i);
    CHECK(a.status == (i % 3 == 0 ? 258u : 0u));
    CHECK(applied_names(a.applied) == (i % 3 == 0 ? "transient-error" : ""));
    CHECK(a.data.empty() == (i % 3 == 0));
  }
  CHECK_FALSE(parse_quirk_arg("transient-error:code=5", s).ok());
  QuirkSetting dflt{"transient-error", true, {}};
  Quirks q;
  REQUIRE(apply_setting(q, dflt).ok());
  CHECK(q.transient_code == 21);
  CHECK(q.transient.probability == 0.05);
}
