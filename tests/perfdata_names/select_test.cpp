#include <catch2/catch.hpp>

#include "perfdata/select.h"

using namespace perfsim;
using namespace perfsim::perfdata;

namespace {
std::vector<ObjectInfo> catalog() {
  return {{2, "PerfOS", false},     {4, "PerfOS", false},     {238, "PerfOS", false},
          {230, "PerfProc", false}, {232, "PerfProc", false}, {786, "PerfProc", true},
          {740, "PerfProc", true},  {234, "PerfDisk", false}, {236, "PerfDisk", false}};
}
}  // namespace

TEST_CASE("value names parse as perflib reads them") {
  CHECK(parse_query("Global").kind == QueryKind::kGlobal);
  CHECK(parse_query("global").kind == QueryKind::kGlobal);
  CHECK(parse_query("OLD_Global").kind == QueryKind::kGlobal);
  CHECK(parse_query("COSTLY").kind == QueryKind::kCostly);
  Query c = parse_query("Counter 009");
  CHECK(c.kind == QueryKind::kCounter);
  CHECK(c.lang == "009");
  CHECK(parse_query("help 00c").lang == "00C");
  CHECK(parse_query("Counter").kind == QueryKind::kCounter);
  CHECK(parse_query("Counter").lang.empty());
  CHECK(parse_query("Explain 009").kind == QueryKind::kExplain);
  Query l = parse_query(" 230  232 ");
  CHECK(l.kind == QueryKind::kIndexList);
  CHECK(l.indices == std::vector<uint32_t>{230, 232});
  Query f = parse_query("Foreign HOST1 238");
  CHECK(f.kind == QueryKind::kForeign);
  CHECK(f.foreign_host == "HOST1");
  CHECK(f.indices == std::vector<uint32_t>{238});
  CHECK(parse_query("NoSuchValue").kind == QueryKind::kUnknown);
  CHECK(parse_query("238 abc").kind == QueryKind::kUnknown);
  CHECK(parse_query("99999999999").kind == QueryKind::kUnknown);
  CHECK(parse_query("").kind == QueryKind::kUnknown);
}

TEST_CASE("selection groups by provider and keeps costly objects out unless named") {
  auto cat = catalog();
  CHECK(select_objects(parse_query("Global"), cat) == std::vector<uint32_t>{2, 4, 238, 230, 232, 234, 236});
  CHECK(select_objects(parse_query("Costly"), cat) == std::vector<uint32_t>{786, 740});
  // Thread alone brings Process (same provider) but not the costly PerfProc objects.
  CHECK(select_objects(parse_query("232"), cat) == std::vector<uint32_t>{230, 232});
  // Naming a costly object returns it, plus its provider's non-costly objects.
  CHECK(select_objects(parse_query("740"), cat) == std::vector<uint32_t>{230, 232, 740});
  CHECK(select_objects(parse_query("9999"), cat).empty());
  CHECK(select_objects(parse_query("Counter 009"), cat).empty());
}

TEST_CASE("assemble takes the header from the base sample and objects in requested order") {
  DataBlock global;
  set_system_name(global, u"HOST");
  global.perf_time = 1234;
  for (uint32_t idx : {2u, 238u}) {
    Object o;
    o.name_index = idx;
    o.counter_block = make_counter_block(8);
    global.objects.push_back(o);
  }
  DataBlock costly;
  Object img;
  img.name_index = 740;
  img.counter_block = make_counter_block(4);
  costly.objects.push_back(img);
  fix_counts(global);
  DataBlock d = assemble(global, {&global, &costly}, {740, 2});
  REQUIRE(d.objects.size() == 2);
  CHECK(d.objects[0].name_index == 740);
  CHECK(d.objects[1].name_index == 2);
  CHECK(d.num_object_types == 2);
  CHECK(d.perf_time == 1234);
  CHECK(d.system_name() == u"HOST");
  DataBlock back;
  REQUIRE(parse(build(d), back, ParseOptions{false}).ok());
  CHECK(back.objects.size() == 2);
}

// Microsoft, "Retrieving Counter Names and Help Text": "Counter <langid>", the primary language id
// for most languages, primary and sublanguage for Chinese and Portuguese (XP/2003: primary only
// for Portuguese); "Adding Counter Names and Descriptions to the Registry": a primary id alone makes
// lodctr use 804 (Chinese) and 416 (Portuguese).
TEST_CASE("a sub-language table is named by its LANGID in three hex digits, as Windows names it") {
  CHECK(parse_query("Counter 0804").lang == "804");
  CHECK(parse_query("Help 804").lang == "804");
  CHECK(parse_query("Counter 0c0a").lang == "C0A");
  CHECK(parse_query("Counter 9").lang == "009");  // Microsoft's sample asks "Counter %d"
  CHECK(parse_query("Counter 0009").lang == "009");
  CHECK(parse_query("counter currentlanguage").lang == "CURRENTLANGUAGE");
  CHECK(parse_query("Counter 00804").kind == QueryKind::kUnknown);  // no LANGID has five digits
  CHECK(is_language("0804"));
  CHECK(is_language("CurrentLanguage"));
  CHECK_FALSE(is_language("_V2Providers"));
  for (bool vista : {false, true}) {
    INFO(vista);
    CHECK(perflib_language("0804", vista) == "804");
    CHECK(perflib_language("0404", vista) == "404");
    CHECK(perflib_language("004", vista) == "804");
    CHECK(perflib_language("0C0A", vista) == "00A");
    CHECK(perflib_language("0407", vista) == "007");
    CHECK(perflib_language("009", vista) == "009");
    CHECK(perflib_language("CurrentLanguage", vista) == "CurrentLanguage");
    CHECK(perflib_language("PerfOS", vista).empty());
  }
  CHECK(perflib_language("0416", true) == "416");
  CHECK(perflib_language("0816", true) == "816");
  CHECK(perflib_language("016", true) == "416");
  CHECK(perflib_language("0416", false) == "016");
  CHECK(perflib_language("0816", false) == "016");
}
