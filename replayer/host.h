// A simulated host: what one Windows machine answers, built from a capture.
//
// The winreg service (winreg/service.h) asks the host for values; the host decides what to answer
// for a value name and a caller's buffer. Two steps keep the seam the quirk engine plugs into:
//   content(): what the value holds now (status, type, bytes) — timeline and query selection;
//   answer():  what the caller gets for the buffer it offered — the buffer policy
//              (rrp-exact by default; quirks replace it).
// A host is immutable after load except for its timeline position, which is atomic, so any
// number of connections on any threads may share one host without locks.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "captures/capture.h"
#include "core/bytes.h"
#include "core/status.h"
#include "replayer/registry.h"

namespace perfsim::replayer {

// WERROR codes as Windows returns them.
namespace werr {
constexpr uint32_t kOk = 0;
constexpr uint32_t kFileNotFound = 2;
constexpr uint32_t kAccessDenied = 5;
constexpr uint32_t kInvalidHandle = 6;
constexpr uint32_t kInvalidParameter = 87;
constexpr uint32_t kCallNotImplemented = 120;
constexpr uint32_t kBusy = 170;
constexpr uint32_t kMoreData = 234;
constexpr uint32_t kNoMoreItems = 259;
}  // namespace werr

// Registry value types.
namespace regtype {
constexpr uint32_t kSz = 1, kExpandSz = 2, kBinary = 3, kDword = 4, kMultiSz = 7;
}

enum class PerfKey { kData, kText, kNlsText };  // HKPD, HKPT, HKPN

struct ValueContent {
  uint32_t status = werr::kOk;  // kFileNotFound for a missing value
  uint32_t type = regtype::kBinary;
  Bytes data;
};

// The caller's buffer: data pointer NULL (has_buffer false) or a buffer of `size` bytes.
struct BufferOffer {
  bool has_buffer = false;
  uint32_t size = 0;
};

struct ValueAnswer {
  uint32_t status = werr::kOk;
  uint32_t type = regtype::kBinary;
  uint32_t size = 0;  // data_size reported back
  Bytes data;         // bytes returned (status kOk with a buffer only)
};

// MS-RRP 3.1.5.17 (rrp-exact): NULL data -> success + needed size; short buffer -> ERROR_MORE_DATA
// + needed size; otherwise the data.
ValueAnswer rrp_exact(ValueContent content, BufferOffer offer);

enum class TimelineMode { kRealtime, kStep, kFrozen };
struct HostOptions {
  TimelineMode mode = TimelineMode::kRealtime;
  uint32_t frozen_tick = 0;
};

class SimulatedHost {
 public:
  static Status load(const captures::Capture& cap, const HostOptions& opt, std::shared_ptr<SimulatedHost>& out);

  const std::string& name() const { return cap_.host.name; }
  const captures::Capture& capture() const { return cap_; }
  const Registry& registry() const { return registry_; }
  uint32_t ticks() const { return uint32_t(ticks_.size()); }

  // The tick a query made now would be served from.
  uint32_t current_tick() const;
  // What `value_name` under HKPD/HKPT/HKPN holds at `tick`.
  ValueContent content(PerfKey key, std::string_view value_name, uint32_t tick) const;
  // The full answer a caller gets now, buffer policy applied. Advances a stepping timeline.
  ValueAnswer query(PerfKey key, std::string_view value_name, BufferOffer offer);
  // The value names EnumValue lists on HKPD (index order).
  std::vector<std::string> perf_value_names() const { return {"Global", "Costly"}; }

 private:
  // Byte ranges of one recorded sample, so an index query is answered by copying slices.
  struct ObjectSlice { uint32_t index; size_t offset; size_t length; };
  struct SampleView { const captures::QueryRecord* record = nullptr; size_t header_length = 0; std::vector<ObjectSlice> objects; };
  struct Tick { SampleView global, costly; std::vector<const captures::QueryRecord*> others; };

  Bytes assemble(const Tick& t, const std::vector<uint32_t>& indices) const;
  const captures::NameTable* names(const std::string& lang) const;

  captures::Capture cap_;
  HostOptions opt_;
  Registry registry_;
  std::vector<Tick> ticks_;
  int64_t epoch_ns_ = 0;  // steady clock when the host started serving
  mutable std::atomic<uint32_t> step_{0};
};

}  // namespace perfsim::replayer
