// Counter block layouts (perfdata/layout.h): every object synth writes sits where the table puts
// it, and a reader that ignores CounterOffset, walking each block in definition order as nmap's
// msrpcperformance.lua does, reads the Process fields perfsim serves.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "captures/reader.h"
#include "helpers.h"
#include "perfdata/layout.h"
#include "perfdata/validate.h"
#include "synth/perfmon_import.h"
#include "synth/profiles.h"
#include "windows/os.h"

using namespace perfsim;
using namespace perfsim::synth;

namespace {

uint32_t version_of_row(const std::string& profile) {
  const windows::OsProfile* os = windows::find_os(profile);
  return os->major * 100 + os->minor;
}

Spec layout_spec(const std::string& profile) {
  Spec s = test::small_spec(profile, 2);
  s.thread_details = true;
  s.images_per_process = 2;
  s.process_v1_disabled = false;  // 2022 serves the PerfProc objects too
  return s;
}

// CounterSize by title index of object `index` in the first Global sample of a `profile` host.
std::map<uint32_t, uint32_t> counter_sizes(const std::string& profile, uint32_t index) {
  const perfdata::DataBlock b = test::decode(test::make(layout_spec(profile)).records[0]);
  const perfdata::Object* o = b.find(index);
  REQUIRE(o != nullptr);
  std::map<uint32_t, uint32_t> out;
  for (const perfdata::CounterDef& d : o->counters) out.emplace(d.name_index, d.size);
  return out;
}

}  // namespace

TEST_CASE("every object of every profile has each counter at the layout table's offset") {
  for (const std::string& name : windows::os_names()) {
    INFO(name);
    const captures::Capture c = test::make(layout_spec(name));
    const std::map<uint32_t, std::string> names = test::names_of(c);
    const uint32_t version = version_of_row(name);
    size_t objects = 0;
    for (size_t r = 0; r < 2; ++r) {  // the first Global and Costly records
      const perfdata::DataBlock b = test::decode(c.records[r]);
      for (const perfdata::Object& o : b.objects) {
        const std::string& oname = names.at(o.name_index);
        INFO(oname);
        const perfdata::CounterLayout* row = perfdata::find_counter_layout(oname, version);
        REQUIRE(row != nullptr);  // every object synth writes is in the table
        std::vector<perfdata::CounterShape> shapes;
        for (const perfdata::CounterDef& d : o.counters) shapes.push_back({d.name_index, d.size});
        const std::vector<uint32_t> want = perfdata::counter_offsets(row, shapes);
        for (size_t k = 0; k < o.counters.size(); ++k) CHECK(o.counters[k].offset == want[k]);
        ++objects;
      }
      // The validator reads the same table and finds nothing to say about these blocks.
      perfdata::ValidateOptions opt;
      opt.layout_version = version;
      opt.names = &names;
      for (const perfdata::Finding& f : perfdata::validate(c.records[r].payload, opt))
        CHECK(f.check != std::string(perfdata::kCounterLayout));
    }
    CHECK(objects > 10);
  }
}

TEST_CASE("every layout row cites its evidence or says it has none") {
  for (const perfdata::CounterLayout& row : perfdata::counter_layouts()) {
    INFO(row.object << " " << row.first << "-" << row.last);
    const std::string source = row.source ? row.source : "";
    const bool marked = source.find(perfdata::kNotAudited) != std::string::npos;
    CHECK(source.size() > 20);      // a citation or what is missing, not a blank
    CHECK(row.audited == !marked);  // an audited row cites a layout; any other says it is not audited
    if (row.audited) CHECK(source.find("no evidence") == std::string::npos);
    CHECK((row.last == 0 || row.last >= row.first));
  }
}

// Microsoft KB 262330: Memory's byte counters are DWORDs on NT 4.0 and 64-bit LARGE_INTEGER from
// Windows 2000 on (32-bit hosts included); Win32_PerfRawData_PerfOS_Memory (aa394314) gives
// Available KBytes and MBytes uint64 as well.
TEST_CASE("Memory's byte counters are 4 bytes on NT 4.0 and 8 bytes from Windows 2000 on") {
  for (const std::string& name : windows::os_names()) {
    INFO(name);
    const std::map<uint32_t, uint32_t> size = counter_sizes(name, 4);
    const uint32_t want = version_of_row(name) >= 500 ? 8 : 4;
    for (uint32_t bytes : {24u, 26u, 30u, 56u, 58u, 818u, 820u, 1380u, 1382u}) {
      INFO(bytes);
      CHECK(size.at(bytes) == want);
    }
  }
}

// Network Interface's byte rates: NT 4.0 all PERF_COUNTER_COUNTER, 4 bytes (MSDN Library April 2000,
// Windows NT counters); 2000-2003 Bytes Total/sec uint64, Received/Sent uint32
// (Win32_PerfRawData_Tcpip_NetworkInterface, aa394340); later all 64-bit (windows_exporter #60).
TEST_CASE("Network Interface's byte rates have each version's sizes") {
  for (const std::string& name : windows::os_names()) {
    INFO(name);
    const std::map<uint32_t, uint32_t> size = counter_sizes(name, 510);
    const uint32_t v = version_of_row(name);
    CHECK(size.at(388) == (v < 500 ? 4u : 8u));  // Bytes Total/sec
    CHECK(size.at(264) == (v < 600 ? 4u : 8u));  // Bytes Received/sec
    CHECK(size.at(506) == (v < 600 ? 4u : 8u));  // Bytes Sent/sec
  }
}

TEST_CASE("the Process layout of 2000 on is Windows': Page Faults/sec at 4, no holes before Thread Count") {
  for (const char* name : {"win2000", "2003", "2008r2", "2016"}) {
    INFO(name);
    const captures::Capture c = test::make(layout_spec(name));
    const perfdata::DataBlock b = test::decode(c.records[0]);
    const perfdata::Object* p = b.find(230);
    REQUIRE(p != nullptr);
    std::map<uint32_t, uint32_t> at;  // first counter of each title index -> offset
    for (const perfdata::CounterDef& d : p->counters) at.emplace(d.name_index, d.offset);
    CHECK(at.at(28) == 4);     // Page Faults/sec
    CHECK(at.at(6) == 8);      // % Processor Time
    CHECK(at.at(180) == 56);   // Working Set
    CHECK(at.at(680) == 88);   // Thread Count
    CHECK(at.at(684) == 96);   // Elapsed Time
    CHECK(at.at(784) == 104);  // ID Process
    CHECK(at.at(952) == 120);  // Handle Count
  }
}

TEST_CASE("a layout row with a lead counter validates a block laid out otherwise as counter.layout") {
  const captures::Capture c = test::make(layout_spec("2016"));
  perfdata::DataBlock b = test::decode(c.records[0]);
  for (perfdata::Object& o : b.objects)
    if (o.name_index == 230)
      for (perfdata::CounterDef& d : o.counters)
        if (d.name_index == 28) d.offset = 52;  // perfsim's old place, in the hole after Virtual Bytes
  perfdata::ValidateOptions opt;
  opt.layout_version = 1000;
  size_t layout = 0;
  for (const perfdata::Finding& f : perfdata::validate(perfdata::build(b), opt))
    layout += f.check == std::string(perfdata::kCounterLayout);
  CHECK(layout == 1);
}

namespace {

uint32_t u32(const Bytes& b, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t u64(const Bytes& b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

// nmap's msrpcperformance.lua, in C++: every counter of an instance read one after the other from
// the counter block's ByteLength on, each as wide as its CounterSize; CounterOffset never read.
// Name index -> value of each Process instance, in order.
std::vector<std::map<uint32_t, uint64_t>> sequential_process(const Bytes& blob) {
  std::vector<std::map<uint32_t, uint64_t>> out;
  size_t pos = u32(blob, 24);  // HeaderLength
  const uint32_t objects = u32(blob, 28);
  for (uint32_t i = 0; i < objects; ++i) {
    const size_t start = pos;
    const uint32_t total = u32(blob, start), def_len = u32(blob, start + 4), hdr_len = u32(blob, start + 8);
    const uint32_t title = u32(blob, start + 12), ncounters = u32(blob, start + 32);
    const int32_t ninstances = int32_t(u32(blob, start + 40));
    std::vector<std::pair<uint32_t, uint32_t>> defs;  // index, size
    size_t d = start + hdr_len;
    for (uint32_t k = 0; k < ncounters; ++k) {
      defs.emplace_back(u32(blob, d + 4), u32(blob, d + 32));
      d += u32(blob, d);
    }
    if (title == 230) {
      size_t in = start + def_len;
      for (int32_t n = 0; n < ninstances; ++n) {
        const size_t block = in + u32(blob, in);
        size_t at = block + 4;
        std::map<uint32_t, uint64_t> values;
        for (const auto& [index, size] : defs) {
          values.emplace(index, size == 8 ? u64(blob, at) : u32(blob, at));
          at += size;
        }
        out.push_back(std::move(values));
        in = block + u32(blob, block);
      }
    }
    pos = start + total;
  }
  return out;
}

}  // namespace

TEST_CASE("a definition-order reader that ignores CounterOffset reads the Process fields perfsim serves") {
  for (const char* name : {"2016", "2008r2", "2003", "win2000"}) {
    INFO(name);
    const captures::Capture c = test::make(layout_spec(name));
    const captures::QueryRecord& r = c.records[0];
    const perfdata::DataBlock b = test::decode(r);
    const perfdata::Object* p = b.find(230);
    REQUIRE(p != nullptr);
    const auto seq = sequential_process(r.payload);
    REQUIRE(seq.size() == p->instances.size());
    for (size_t i = 0; i < seq.size(); ++i) {
      INFO(i);
      const Bytes& block = p->instances[i].counter_block;
      for (uint32_t index : {784u, 1410u, 682u, 680u, 952u, 180u, 684u})  // PID, parent, priority,
        CHECK(seq[i].at(index) == test::value(*p, block, index));         // threads, handles, WS, elapsed
    }
  }
}

TEST_CASE("a host import --perfmon makes lays Process out by the table too") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("perfsim-layout-import-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);
  // Page Faults/sec is the row's lead counter; a log naming it and 8-byte counters after it.
  std::ofstream(dir + "/log.csv", std::ios::binary)
      << "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\APP01\\Process(sqlservr)\\% Processor Time\","
         "\"\\\\APP01\\Process(sqlservr)\\Page Faults/sec\",\"\\\\APP01\\Process(sqlservr)\\Working Set\","
         "\"\\\\APP01\\Process(sqlservr)\\ID Process\",\"\\\\APP01\\Process(sqlservr)\\Handle Count\"\r\n"
         "\"03/14/2026 10:00:00.000\",\"12.5\",\"30\",\"104857600\",\"1732\",\"880\"\r\n"
         "\"03/14/2026 10:00:15.000\",\"20\",\"31\",\"104857600\",\"1732\",\"881\"\r\n"
         "\"03/14/2026 10:00:30.000\",\"25\",\"32\",\"104861696\",\"1732\",\"882\"\r\n";
  synth::PerfmonImportReport report;
  const Status st = synth::import_perfmon(dir + "/log.csv", dir + "/app01.perfcap", "2016", report);
  INFO(st.message());
  REQUIRE(st.ok());
  captures::Capture c;
  REQUIRE(captures::read_capture(dir + "/app01.perfcap", c).ok());
  std::filesystem::remove_all(dir);
  const perfdata::DataBlock b = test::decode(c.records[0]);
  const perfdata::Object* p = b.find(230);
  REQUIRE(p != nullptr);
  std::vector<perfdata::CounterShape> shapes;
  for (const perfdata::CounterDef& d : p->counters) shapes.push_back({d.name_index, d.size});
  const std::vector<uint32_t> want = perfdata::counter_offsets(perfdata::find_counter_layout("Process", 1000), shapes);
  for (size_t k = 0; k < p->counters.size(); ++k) {
    INFO(p->counters[k].name_index);
    CHECK(p->counters[k].offset == want[k]);
  }
  CHECK(p->counters.at(0).offset != 4);  // % Processor Time is first, yet Page Faults/sec leads
  for (const perfdata::CounterDef& d : p->counters)
    if (d.name_index == 28) CHECK(d.offset == 4);
}
