// An RPC interface as data, on Samba's model (librpc/rpc/dcesrv_core.h `struct dcesrv_interface`:
// a syntax id and the calls of an `ndr_interface_table`, librpc/ndr/libndr.h): its abstract
// syntax and a table of operations, each an opnum, a name and one function that decodes the
// request stub into its typed struct, runs the operation and encodes the typed response.
// The per-association state of an interface (handle tables, the host it answers for) is an
// InterfaceSession: Samba keeps it in the connection context's private data; here the
// interface's service class derives from it.
//
// What an interface folder writes: its request/response structs with `decode(ByteView, Req&)`
// (found by argument-dependent lookup), a session class with one member function per operation
// `uint32_t op(const Req&, Resp&)` and one `reply(Resp&, ByteChain&)` (its encoder), and the table
// (`operation<&Session::op>(opnum, "Name")` per row). Adding an operation is one row plus its
// function; the association, the fault PDUs (rpc/pdu.h defines every fault code once) and the
// journal hook (server/rpc_handler.h) are shared.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/byte_chain.h"
#include "core/bytes.h"
#include "core/shared_bytes.h"
#include "rpc/pdu.h"

namespace perfsim::rpc {

// What the last call was about, for observers above the interface (the journal, metrics): plain
// facts, no knowledge of where they go. Strings are filled only while observing, so a server
// without observers pays for none of them. The fields are the registry's (MS-RRP), the only
// interface observed today; another interface fills what applies to it.
struct CallNote {
  std::string value_name;                       // QueryValue, EnumValue (the value listed), OpenKey (the subkey)
  std::shared_ptr<const std::string> key_path;  // "HKEY_PERFORMANCE_DATA", "HKLM\\SOFTWARE\\..."; null: unknown handle
  bool has_buffer = false;                      // the caller sent a data buffer (QueryValue, EnumValue)
  uint32_t offered = 0;                         // its size (data_size in)
  uint32_t status = 0;                          // WERROR of the response
  uint32_t type = 0;                            // value type returned (QueryValue, EnumValue)
  uint32_t size = 0;                            // data_size returned (the size the server said)
  uint32_t bytes = 0;                           // value bytes returned
  uint32_t delay_ms = 0;                        // the host's delay before this answer leaves
  uint32_t applied = 0;                         // replayer::Applied bits
  bool closed = false;                          // no answer: the connection was closed instead (gone(), a reset)
  SharedBytes answer;  // the perf data a QueryValue answered WERR_OK (shared, not copied): perfsim check's values
  // What happened to the server before this call that no observer was told of yet (a host's
  // timeline events, replayer/events.h): each as its JSON object and the wall-clock time (UTC, us
  // since 1970) it happened. Observers journal them as entries of their own.
  struct Happening {
    std::string what_json;
    int64_t time_us = 0;
  };
  std::vector<Happening> happened;
};

// What the calls since the last take asked of the transport besides their answers.
struct CallEffects {
  uint32_t delay_ms = 0;         // hold the replies this long (a slow or stalled host)
  bool drop_connection = false;  // close instead of answering (the host vanished mid-call)
};

// One association's state of one interface. Not thread-safe: a connection calls it from its own
// strand only.
class InterfaceSession {
 public:
  virtual ~InterfaceSession() = default;
  // Observing: every call leaves its facts in last_call() (reset at each call).
  void observe(bool on) { observing_ = on; }
  bool observing() const { return observing_; }
  const CallNote& last_call() const { return note_; }
  CallNote take_call() { return std::move(note_); }
  CallEffects take_effects() { return std::exchange(effects_, CallEffects{}); }
  // Called by Interface::call before each operation.
  void begin_call() {
    if (observing_) note_ = CallNote{};
  }
  // True when the server behind the session is gone for this call (a rebooting host:
  // winreg::Service): the session has set effects_.drop_connection and the call gets no answer.
  virtual bool gone() { return false; }

 protected:
  CallNote note_;
  CallEffects effects_;
  bool observing_ = false;
};

// Returns 0 with the NDR response stub in `out` (it may share, not copy, payload buffers), or the
// DCE/RPC fault status the association sends instead.
using OperationFn = uint32_t (*)(InterfaceSession& session, ByteView stub_in, ByteChain& stub_out);

struct Operation {
  uint16_t opnum = 0;
  const char* name = "";  // the IDL's name, for logs and tests
  OperationFn call = nullptr;
};

struct Interface {
  const char* name = "";  // "winreg", "epmapper", "srvsvc", "wkssvc"
  SyntaxId syntax;        // the abstract syntax a bind must name (AssociationConfig::interface)
  std::span<const Operation> operations;

  const Operation* find(uint16_t opnum) const {
    if (opnum < operations.size() && operations[opnum].opnum == opnum) return &operations[opnum];
    for (const Operation& op : operations)
      if (op.opnum == opnum) return &op;
    return nullptr;
  }
  // The generic dispatch: an opnum without a row faults nca_op_rng_error (C706 and MS-RPCE
  // 3.1.1.5.3; Samba's dcesrv_*_ndr_pull answers DCERPC_NCA_S_OP_RNG_ERROR the same way).
  uint32_t call(InterfaceSession& s, uint16_t opnum, ByteView in, ByteChain& out) const {
    s.begin_call();
    if (s.gone()) return 0;  // no answer: the transport closes the connection
    const Operation* op = find(opnum);
    return op ? op->call(s, in, out) : kFaultOpRangeError;
  }
};

// ---- typed operations --------------------------------------------------------------------------

template <class F>
struct OperationTraits;
template <class S, class Req, class Resp>
struct OperationTraits<uint32_t (S::*)(const Req&, Resp&)> {
  using Session = S;
  using Request = Req;
  using Response = Resp;
};

// Decode, run, encode: a stub that does not decode is RPC_X_BAD_STUB_DATA (Samba's
// dcesrv_*_ndr_pull: DCERPC_FAULT_NDR); a non-zero return is a fault and sends no stub.
template <auto Fn>
uint32_t typed_call(InterfaceSession& s, ByteView in, ByteChain& out) {
  using T = OperationTraits<decltype(Fn)>;
  typename T::Request req;
  if (!decode(in, req).ok()) return kFaultBadStubData;
  typename T::Response resp;
  auto& self = static_cast<typename T::Session&>(s);
  if (const uint32_t fault = (self.*Fn)(req, resp)) return fault;
  self.reply(resp, out);
  return 0;
}

// One row of an interface's table: `Fn` is `uint32_t Session::op(const Req&, Resp&)`.
template <auto Fn>
constexpr Operation operation(uint16_t opnum, const char* name) {
  return Operation{opnum, name, &typed_call<Fn>};
}

}  // namespace perfsim::rpc
