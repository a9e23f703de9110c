// Writers of PerfDisk's PhysicalDisk and LogicalDisk, both sums of the volumes.
#include "synth/model_state.h"

#include <algorithm>

namespace perfsim::synth {

namespace {

void write_disk(const ObjState& o, Bytes& b, const DiskSums& d, uint64_t stamp) {
  o.set_pair(b, idx::kFreeSpace, uint64_t(d.free_mb), uint64_t(d.size_mb));
  o.set(b, idx::kFreeMegabytes, uint64_t(d.free_mb));
  o.set(b, idx::kCurrentDiskQueue, d.cur_queue);
  o.set_pair(b, idx::kDiskTime, d.busy, stamp);
  o.set(b, idx::kAvgDiskQueue, d.queue);
  o.set_pair(b, idx::kDiskReadTime, d.rbusy, stamp);
  o.set(b, idx::kAvgDiskReadQueue, d.rqueue);
  o.set_pair(b, idx::kDiskWriteTime, d.wbusy, stamp);
  o.set(b, idx::kAvgDiskWriteQueue, d.wqueue);
  o.set_pair(b, idx::kAvgSecTransfer, d.rticks + d.wticks, d.reads + d.writes);
  o.set_pair(b, idx::kAvgSecRead, d.rticks, d.reads);
  o.set_pair(b, idx::kAvgSecWrite, d.wticks, d.writes);
  o.set(b, idx::kTransfers, d.reads + d.writes);
  o.set(b, idx::kReads, d.reads);
  o.set(b, idx::kWrites, d.writes);
  o.set(b, idx::kDiskBytes, d.rbytes + d.wbytes);
  o.set(b, idx::kDiskReadBytes, d.rbytes);
  o.set(b, idx::kDiskWriteBytes, d.wbytes);
  o.set_pair(b, idx::kAvgBytesTransfer, d.rbytes + d.wbytes, d.reads + d.writes);
  o.set_pair(b, idx::kAvgBytesRead, d.rbytes, d.reads);
  o.set_pair(b, idx::kAvgBytesWrite, d.wbytes, d.writes);
  o.set_pair(b, idx::kDiskIdleTime, d.idle, stamp);
  o.set(b, idx::kSplitIo, d.split);
}

}  // namespace

void Model::State::write_disks(ObjState& o, bool logical) {
  // Instances: one per volume (LogicalDisk) or per physical disk "N C: D:" (PhysicalDisk), then _Total.
  std::vector<DiskSums> sums;
  std::vector<std::string> names;
  if (logical) {
    for (const Volume& v : volumes) {
      sums.emplace_back().add(v);
      names.push_back(v.name);
    }
  } else {
    for (uint32_t d = 0; d < spec.physical_disks; ++d) {
      DiskSums s;
      std::string name = std::to_string(d);
      for (const Volume& v : volumes)
        if (v.disk == d) s.add(v), name += " " + v.name;
      if (s.busy == 0 && s.idle == 0) s.idle = uint64_t(now - boot);  // a disk without volumes idles
      sums.push_back(s);
      names.push_back(name);
    }
  }
  DiskSums total;
  for (const DiskSums& s : sums) total.add(s);
  // _Total's busy and idle times are averages, so its percentages stay within 0..100.
  const uint64_t n = std::max<size_t>(sums.size(), 1);
  total.busy /= n, total.rbusy /= n, total.wbusy /= n, total.idle /= n;
  sums.push_back(total);
  names.push_back("_Total");
  if (o.obj.instances.size() != names.size()) {
    o.obj.instances.clear();
    for (const std::string& name : names) o.add_instance(name);
  }
  for (size_t i = 0; i < sums.size(); ++i) write_disk(o, o.block(i), sums[i], uint64_t(now));
}

}  // namespace perfsim::synth
