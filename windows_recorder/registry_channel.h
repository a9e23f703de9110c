// A winreg Channel (recorder/channel.h) answered by the Windows registry API instead of a DCE/RPC
// server: each request stub is decoded with winreg/codec.h, performed with RegOpenKeyExW,
// RegEnumKeyExW, RegQueryValueExW and RegCloseKey, and its answer encoded back. recorder::record()
// then records a Windows host through the same calls, probes and fingerprint it uses over the
// network, while what it records is what perflib answers RegQueryValueEx on this machine
// (HKEY_PERFORMANCE_DATA's buffer rules included), or, with a machine name, what the remote
// registry service answers RegConnectRegistryW as PDH uses it.
//
// No <windows.h> here: perfdata/winperf.h's PERF_* constants are macros in Windows' winperf.h, so
// Windows' headers stay in the .cpp files (keys are held as void*, an HKEY's own representation).
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "recorder/channel.h"
#include "winreg/codec.h"

namespace perfsim::windows_recorder {

// The host's NetBIOS name (GetComputerNameW), "host" if it has none.
std::string computer_name();
// Ctrl-C, Ctrl-Break and closing the console set *stop instead of ending the process.
void stop_on_console_events(std::atomic<bool>* stop);

// The text Windows gives an error code (FormatMessageW), as "error 53: The network path was not found."
std::string windows_error_text(unsigned long code);

class RegistryChannel : public recorder::Channel {
 public:
  ~RegistryChannel() override;
  // machine empty: this machine's HKEY_LOCAL_MACHINE and HKEY_PERFORMANCE_DATA; else both hives of
  // \\machine through RegConnectRegistryW with the caller's logon (IOError with Windows' text when
  // either cannot be reached).
  static Status open(const std::string& machine, std::unique_ptr<RegistryChannel>& out);

  Status call(uint16_t opnum, ByteView stub, Bytes& out) override;
  std::string describe() const override;

 private:
  RegistryChannel() = default;
  Status open_hive(uint16_t opnum, ByteView stub, Bytes& out);
  Status open_key(ByteView stub, Bytes& out);
  Status enum_key(ByteView stub, Bytes& out);
  Status query_value(ByteView stub, Bytes& out);
  Status close_key(ByteView stub, Bytes& out);
  // A handle for `key`; the key behind a handle (nullptr when unknown).
  winreg::PolicyHandle remember(void* key);
  void* key_of(const winreg::PolicyHandle& h) const;

  std::string machine_;
  void* hklm_ = nullptr;  // remote hives (RegConnectRegistryW); nullptr: this machine's
  void* hkpd_ = nullptr;
  std::map<uint32_t, void*> keys_;  // handle number -> HKEY
  uint32_t next_ = 1;
};

}  // namespace perfsim::windows_recorder
