#include "recorder/smb2_pipes.h"

#include <algorithm>

namespace perfsim::recorder {
namespace {

// MS-SMB2 2.2.1 header and the commands carrying pipe data.
constexpr size_t kHeader = 64;
constexpr uint16_t kSessionSetup = 0x01, kRead = 0x08, kWrite = 0x09, kIoctl = 0x0b;
constexpr uint32_t kFlagResponse = 0x1, kFlagAsync = 0x2, kFlagRelated = 0x4;
constexpr uint32_t kStatusSuccess = 0, kStatusPending = 0x103, kStatusBufferOverflow = 0x80000005;
constexpr uint32_t kFsctlPipeTransceive = 0x0011c017;
constexpr uint8_t kSmb1NegotiateCommand = 0x72;

bool magic(ByteView m, uint8_t first) {
  return m.size() >= 4 && m[0] == first && m[1] == 'S' && m[2] == 'M' && m[3] == 'B';
}

FileId file_id(ByteView m, size_t at) {
  FileId f{};
  std::copy_n(m.begin() + std::ptrdiff_t(at), f.size(), f.begin());
  return f;
}

// A payload [offset, offset + count) of the command starting at `at`, when it lies inside it.
bool payload(ByteView msg, size_t at, size_t end, uint32_t offset, uint32_t count, ByteView& out) {
  if (count == 0) {
    out = {};
    return true;
  }
  if (offset < kHeader || uint64_t(at) + offset + count > end) return false;
  out = msg.subspan(at + offset, count);
  return true;
}

}  // namespace

const char* smb_stop_reason(Smb2PipeDemux::Stop s) {
  switch (s) {
    case Smb2PipeDemux::Stop::kEncrypted:
      return "SMB3-encrypted session";
    case Smb2PipeDemux::Stop::kCompressed:
      return "SMB3-compressed session";
    case Smb2PipeDemux::Stop::kSmb1:
      return "SMB1 session (only SMB2/3 named pipes are decoded)";
    case Smb2PipeDemux::Stop::kNotSmb:
      return "SMB stream that stopped making sense";
    case Smb2PipeDemux::Stop::kNone:
      break;
  }
  return "";
}

bool Smb2PipeDemux::looks_like_smb(ByteView b) {
  if (b.size() < 8) return false;
  if (b[0] == 0x81) return true;  // NetBIOS session request (port 139)
  const ByteView m = b.subspan(4);
  return b[0] == 0x00 && (magic(m, 0xff) || magic(m, 0xfe) || magic(m, 0xfd) || magic(m, 0xfc));
}

void Smb2PipeDemux::feed(bool from_client, ByteView data, int64_t time) {
  if (stop_ != Stop::kNone) return;
  Bytes& buf = buffer_[from_client];
  buf.insert(buf.end(), data.begin(), data.end());
  size_t used = 0;
  while (stop_ == Stop::kNone && buf.size() - used >= 4) {
    // NetBIOS session service header: type, then a 24-bit big-endian length (MS-SMB2 2.1).
    const size_t len = size_t(buf[used + 1]) << 16 | size_t(buf[used + 2]) << 8 | buf[used + 3];
    if (buf.size() - used - 4 < len) break;
    if (buf[used] == 0x00) message(from_client, ByteView(buf).subspan(used + 4, len), time);
    used += 4 + len;
  }
  buf.erase(buf.begin(), buf.begin() + std::ptrdiff_t(used));
  if (stop_ != Stop::kNone) {
    Bytes().swap(buffer_[0]);
    Bytes().swap(buffer_[1]);
    pending_.clear();
  }
}

void Smb2PipeDemux::message(bool from_client, ByteView msg, int64_t time) {
  if (magic(msg, 0xfd)) {
    stop_ = Stop::kEncrypted;
    return;
  }
  if (magic(msg, 0xfc)) {
    stop_ = Stop::kCompressed;
    return;
  }
  if (magic(msg, 0xff)) {
    // Clients open with an SMB1 negotiate listing SMB2 dialects; anything more is an SMB1 session.
    if (msg.size() < 5 || msg[4] != kSmb1NegotiateCommand) stop_ = Stop::kSmb1;
    return;
  }
  if (!magic(msg, 0xfe)) {
    stop_ = Stop::kNotSmb;
    return;
  }
  FileId related{};
  for (size_t at = 0;;) {
    if (msg.size() - at < kHeader) {
      stop_ = Stop::kNotSmb;
      return;
    }
    // NextCommand bounds the command's payload (smb2()): check it before anything is read.
    const uint32_t next = load_le32(&msg[at + 20]);
    if (next != 0 && (next < kHeader || next > msg.size() - at)) {
      stop_ = Stop::kNotSmb;
      return;
    }
    smb2(from_client, msg, at, related, time);
    if (next == 0) return;
    at += next;
  }
}

void Smb2PipeDemux::smb2(bool from_client, ByteView msg, size_t at, FileId& related, int64_t time) {
  const uint32_t next = load_le32(&msg[at + 20]);
  const size_t end = next ? at + next : msg.size();
  const uint32_t status = load_le32(&msg[at + 8]);
  const uint16_t command = load_le16(&msg[at + 12]);
  const uint32_t flags = load_le32(&msg[at + 16]);
  const uint64_t message_id = load_le64(&msg[at + 24]);
  const bool response = flags & kFlagResponse;
  if (response == from_client) return;  // direction and flag disagree: not ours to guess
  const size_t body = at + kHeader;
  ByteView data;
  if (!response) {
    FileId fid{};
    if (command == kWrite && end - body >= 32) {
      fid = file_id(msg, body + 16);
    } else if (command == kIoctl && end - body >= 56) {
      if (load_le32(&msg[body + 4]) != kFsctlPipeTransceive) return;
      fid = file_id(msg, body + 8);
    } else if (command == kRead && end - body >= 32) {
      fid = file_id(msg, body + 16);
    } else {
      return;
    }
    if ((flags & kFlagRelated) && std::all_of(fid.begin(), fid.end(), [](uint8_t b) { return b == 0xff; }))
      fid = related;
    related = fid;
    pending_[message_id] = {command, fid};
    if (command == kWrite && payload(msg, at, end, load_le16(&msg[body + 2]), load_le32(&msg[body + 4]), data))
      sink_(fid, true, data, time);
    else if (command == kIoctl && payload(msg, at, end, load_le32(&msg[body + 24]), load_le32(&msg[body + 28]), data))
      sink_(fid, true, data, time);
    return;
  }
  if (command == kSessionSetup && !announced_ && end - body >= 8) {
    // SESSION_SETUP response: SecurityBufferOffset (from the header) and Length at 4 and 6.
    if (payload(msg, at, end, load_le16(&msg[body + 4]), load_le16(&msg[body + 6]), data))
      announced_ = rpc::find_ntlm_challenge_version(data);
    return;
  }
  auto it = pending_.find(message_id);
  if (it == pending_.end()) return;
  if (status == kStatusPending && (flags & kFlagAsync)) return;  // the real answer comes later
  const Pending req = it->second;
  pending_.erase(it);
  if (status != kStatusSuccess && status != kStatusBufferOverflow) return;
  if (req.command == kRead && end - body >= 16) {
    if (payload(msg, at, end, msg[body + 2], load_le32(&msg[body + 4]), data)) sink_(req.fid, false, data, time);
  } else if (req.command == kIoctl && end - body >= 48) {
    if (payload(msg, at, end, load_le32(&msg[body + 32]), load_le32(&msg[body + 36]), data))
      sink_(req.fid, false, data, time);
  }
}

}  // namespace perfsim::recorder
