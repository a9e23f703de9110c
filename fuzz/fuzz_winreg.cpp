// winreg NDR: the first byte picks one of the request or response decoders (servers decode
// requests, our recorder and query decode responses), the rest is the stub. What decodes must
// encode the same way twice (encode, decode again, encode: equal bytes), and the shared encoding
// must equal the plain one.
#include <memory>

#include "fuzz/fuzz_input.h"
#include "winreg/codec.h"

using namespace perfsim;

namespace {

template <typename T>
void check(ByteView stub) {
  T v;
  if (!winreg::decode(stub, v).ok()) return;
  const Bytes once = winreg::encode(v);
  T again;
  fuzz::require(winreg::decode(once, again).ok());
  fuzz::require(winreg::encode(again) == once);
  fuzz::require(winreg::encode_shared(std::make_shared<const T>(v)).flatten() == once);
}

using Check = void (*)(ByteView);
#define PERFSIM_FUZZ_ENTRY(T) &check<winreg::T>,
constexpr Check kChecks[] = {PERFSIM_WINREG_MESSAGES(PERFSIM_FUZZ_ENTRY)};
#undef PERFSIM_FUZZ_ENTRY

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t which = in.u8();
  kChecks[which % std::size(kChecks)](in.rest());
  return 0;
}
