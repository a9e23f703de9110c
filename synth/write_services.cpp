// Writers of the file system cache and the SMB services' objects (counter sets): Cache from
// System's file reads and Memory's cache faults and page writes; Server, Server Work Queues and
// Redirector as shares of the adapters' bytes; Browser from the time since boot. No draws.
#include "synth/model_state.h"

#include <algorithm>

namespace perfsim::synth {

void Model::State::write_cache(ObjState& o) {
  // Copy reads are the file system's reads; a miss is a cache fault (a quarter of Memory's are
  // the cache's copy reads), never more than the reads.
  CacheState& c = cache_state;
  const uint64_t dr = file_ops[0] - std::min(file_ops[0], c.last_reads);
  const uint64_t df = cache_faults - std::min(cache_faults, c.last_faults);
  c.last_reads = file_ops[0], c.last_faults = cache_faults;
  c.reads += dr, c.misses += std::min(dr, df / 4);
  Bytes& b = o.obj.counter_block;
  auto set = [&](const char* name, uint64_t v) { o.set(b, o.idx(name), v); };
  auto hits = [&](const char* name, uint64_t tries, uint64_t hit) { o.set_pair(b, o.idx(name), hit, tries); };
  const uint64_t reads = c.reads, maps = reads / 2, pins = reads / 4, mdl = reads / 20, fast = reads * 7 / 10;
  set("Data Maps/sec", maps);
  set("Sync Data Maps/sec", maps - maps / 5);
  set("Async Data Maps/sec", maps / 5);
  hits("Data Map Hits %", maps, maps - maps / 20);
  set("Data Map Pins/sec", maps / 3);
  set("Pin Reads/sec", pins);
  set("Sync Pin Reads/sec", pins - pins / 5);
  set("Async Pin Reads/sec", pins / 5);
  hits("Pin Read Hits %", pins, pins - pins / 10);
  set("Copy Reads/sec", reads);
  set("Sync Copy Reads/sec", reads - reads / 5);
  set("Async Copy Reads/sec", reads / 5);
  hits("Copy Read Hits %", reads, reads - c.misses);
  set("MDL Reads/sec", mdl);
  set("Sync MDL Reads/sec", mdl - mdl / 4);
  set("Async MDL Reads/sec", mdl / 4);
  hits("MDL Read Hits %", mdl, mdl - mdl / 4);
  set("Read Aheads/sec", reads / 8);
  set("Fast Reads/sec", fast);
  set("Sync Fast Reads/sec", fast - fast / 10);
  set("Async Fast Reads/sec", fast / 10);
  set("Fast Read Resource Misses/sec", fast / 100);
  set("Fast Read Not Possibles/sec", fast / 50);
  // The lazy writer's pages are part of Memory's Pages Output, its flushes of Page Writes.
  set("Lazy Write Flushes/sec", page_writes / 2);
  set("Lazy Write Pages/sec", pages_output / 2);
  set("Data Flushes/sec", page_writes / 2 + page_writes / 8);
  set("Data Flush Pages/sec", pages_output / 2 + pages_output / 8);
  set("Dirty Pages", cache_peak / 4096 / 50);
  set("Dirty Page Threshold", spec.memory_mb * kMiB / 4096 / 8);
}

// Server: 5% of the adapters' bytes are SMB served to clients; Server Work Queues splits the
// same traffic over one queue per processor (the blocking queue carries none).
void Model::State::write_server(ObjState& o, bool queues) {
  uint64_t rx = 0, tx = 0;
  for (const Nic& n : nics) rx += n.rbytes / 20, tx += n.sbytes / 20;
  const uint64_t up_s = uint64_t((now - boot) / k100ns);
  const uint64_t sessions = 2 + procs.size() / 50;
  if (!queues) {
    Bytes& b = o.obj.counter_block;
    auto set = [&](const char* name, uint64_t v) { o.set(b, o.idx(name), v); };
    set("Bytes Total/sec", rx + tx);
    set("Bytes Received/sec", rx);
    set("Bytes Transmitted/sec", tx);
    set("Sessions Logged Off", up_s / 3600);
    set("Files Opened Total", up_s / 30);
    set("Files Open", sessions * 2);
    set("Server Sessions", sessions);
    set("File Directory Searches", sessions);
    set("Pool Nonpaged Bytes", 90000 + 4000 * sessions);
    set("Pool Nonpaged Peak", 90000 + 8000 * sessions);
    set("Pool Paged Bytes", 300000 + 20000 * sessions);
    set("Pool Paged Peak", 300000 + 40000 * sessions);
    set("Context Blocks Queued/sec", up_s * 5);
    set("Logon/sec", up_s / 600);
    set("Logon Total", up_s / 600);
    return;
  }
  const size_t n = cpus.size();
  if (o.obj.instances.size() != n + 1) {
    o.obj.instances.clear();
    for (size_t i = 0; i < n; ++i) o.add_instance(std::to_string(i));
    o.add_instance("Blocking Queue");
  }
  for (size_t i = 0; i <= n; ++i) {
    Bytes& b = o.block(i);
    auto set = [&](const char* name, uint64_t v) { o.set(b, o.idx(name), v); };
    const bool blocking = i == n;
    const uint64_t r = blocking ? 0 : rx / n, t = blocking ? 0 : tx / n;
    set("Active Threads", blocking ? 1 : 2);
    set("Available Threads", blocking ? 0 : 10);
    set("Available Work Items", blocking ? 0 : 64);
    set("Current Clients", blocking ? 0 : sessions);
    set("Bytes Received/sec", r);
    set("Bytes Sent/sec", t);
    set("Bytes Transferred/sec", r + t);
    set("Read Operations/sec", t / 16384);
    set("Read Bytes/sec", t);
    set("Write Operations/sec", r / 16384);
    set("Write Bytes/sec", r);
    set("Total Bytes/sec", r + t);
    set("Total Operations/sec", (r + t) / 16384);
    set("Context Blocks Queued/sec", blocking ? 0 : up_s * 5 / n);
  }
}

// Redirector: 3% of the adapters' bytes go to other computers' shares.
void Model::State::write_redirector(ObjState& o) {
  uint64_t rx = 0, tx = 0;
  for (const Nic& n : nics) rx += n.rbytes * 3 / 100, tx += n.sbytes * 3 / 100;
  Bytes& b = o.obj.counter_block;
  auto set = [&](const char* name, uint64_t v) { o.set(b, o.idx(name), v); };
  const uint64_t reads = rx / 16384, writes = tx / 16384, rpk = rx / 1400, tpk = tx / 1400;
  set("Bytes Total/sec", rx + tx);
  set("File Data Operations/sec", reads + writes);
  set("Packets/sec", rpk + tpk);
  set("Bytes Received/sec", rx);
  set("Packets Received/sec", rpk);
  set("Read Bytes Non-Paging/sec", rx - rx / 10);
  set("Read Bytes Paging/sec", rx / 10);
  set("Read Bytes Network/sec", rx);
  set("Bytes Transmitted/sec", tx);
  set("Packets Transmitted/sec", tpk);
  set("Write Bytes Non-Paging/sec", tx);
  set("Write Bytes Network/sec", tx);
  set("File Read Operations/sec", reads);
  set("Read Packets/sec", reads);
  set("Reads Large/sec", reads / 4);
  set("Read Packets Small/sec", reads - reads / 4);
  set("File Write Operations/sec", writes);
  set("Write Packets/sec", writes);
  set("Writes Large/sec", writes / 4);
  set("Write Packets Small/sec", writes - writes / 4);
  set("Server Sessions", 2);
  set("Connects Windows NT", 2);
}

// Browser: a domain's announcements every 12 minutes, a few enumerations an hour.
void Model::State::write_browser(ObjState& o) {
  const uint64_t up_s = uint64_t((now - boot) / k100ns);
  Bytes& b = o.obj.counter_block;
  auto set = [&](const char* name, uint64_t v) { o.set(b, o.idx(name), v); };
  set("Announcements Server/sec", up_s / 720);
  set("Announcements Domain/sec", up_s / 900);
  set("Announcements Total/sec", up_s / 720 + up_s / 900);
  set("Mailslot Writes/sec", up_s / 300);
  set("Server List Requests/sec", up_s / 1800);
  set("Enumerations Server/sec", up_s / 1200);
  set("Enumerations Domain/sec", up_s / 3600);
  set("Enumerations Other/sec", up_s / 7200);
  set("Enumerations Total/sec", up_s / 1200 + up_s / 3600 + up_s / 7200);
}

// Terminal Services (the console session), a thermal zone near 40 C, NUMA node 0 holding all of
// Memory, a print queue that printed a job an hour. No draws.
void Model::State::write_small_sets(ObjState& o) {
  const uint64_t up_s = uint64_t((now - boot) / k100ns);
  auto single = [&](const char* name, uint64_t v) { o.set(o.obj.counter_block, o.idx(name), v); };
  switch (o.cat->desc.family) {
    case Family::kTerminalServices:
      single("Active Sessions", 1);
      single("Inactive Sessions", 0);
      single("Total Sessions", 2);  // the console and the services' session 0
      return;
    case Family::kThermalZone: {
      if (o.obj.instances.empty()) o.add_instance("\\_TZ.THRM");
      double busy = 0;
      for (const Cpu& c : cpus) busy += double(c.busy_now) / double(std::max<int64_t>(now - last, 1));
      const uint64_t kelvin = uint64_t(313 + 20 * busy / double(std::max<size_t>(cpus.size(), 1)));
      Bytes& b = o.block(0);
      o.set(b, o.idx("Temperature"), kelvin);
      o.set(b, o.idx("% Passive Limit"), 100);
      o.set(b, o.idx("Throttle Reasons"), 0);
      o.set(b, o.idx("High Precision Temperature"), kelvin * 10);
      return;
    }
    case Family::kNumaNodeMemory: {
      if (o.obj.instances.empty()) {
        o.add_instance("0");
        o.add_instance("_Total");
      }
      const uint64_t total = spec.memory_mb, avail = available / kMiB;
      for (size_t i = 0; i < 2; ++i) {
        Bytes& b = o.block(i);
        o.set(b, o.idx("Total MBytes"), total);
        o.set(b, o.idx("Available MBytes"), avail);
        o.set(b, o.idx("Free & Zero Page List MBytes"), avail / 10);
        o.set(b, o.idx("Standby List MBytes"), avail - avail / 10);
        o.set(b, o.idx("Modified List MBytes"), (total - std::min(total, avail)) / 50);
      }
      return;
    }
    case Family::kPrintQueue:
      if (o.obj.instances.empty()) {
        o.add_instance("Microsoft Print to PDF");
        o.add_instance("_Total");
      }
      for (size_t i = 0; i < 2; ++i) {
        Bytes& b = o.block(i);
        o.set(b, o.idx("Total Jobs Printed"), up_s / 3600);
        o.set(b, o.idx("Bytes Printed/sec"), up_s / 3600 * 250000);
        o.set(b, o.idx("Total Pages Printed"), up_s / 3600 * 3);
        o.set(b, o.idx("References"), 1);
        o.set(b, o.idx("Max References"), 2);
        o.set(b, o.idx("Max Jobs Spooling"), 1);
      }
      return;
    default:
      return;
  }
}

}  // namespace perfsim::synth
