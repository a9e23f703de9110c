// The admin API's token (perfsim serve --admin-token-file FILE; README.md, "A token for shared
// machines"). Loopback keeps other machines out, not other users of this one: with a token every
// request must carry it, as `Authorization: Bearer TOKEN` (RFC 6750 2.1: curl, Prometheus'
// `authorization.credentials_file`) or as the cookie a browser gets by opening `/?token=TOKEN`
// once. The token lives in a file only its owner may read, never on a command line (which
// /proc/PID/cmdline shows every local user).
#pragma once
#include <string>
#include <string_view>

#include "core/status.h"

namespace perfsim::admin {

inline constexpr std::string_view kTokenCookie = "perfsim_admin_token";
inline constexpr size_t kMinTokenSize = 16, kMaxTokenSize = 256;

// Reads the token from `path`, or, when no file is there, makes one (32 random bytes from
// OpenSSL's RAND_bytes, as 64 hex digits) and writes it there, mode 0600, created exclusively.
// Refuses (InvalidArgument, saying what to do) a file that is not a regular file owned by this
// user, one that group or others may read or write (as ssh does a private key), and a token
// outside [kMinTokenSize, kMaxTokenSize] characters of RFC 6750's b64token alphabet. `created`
// says which happened.
Status load_or_create_token(const std::string& path, std::string& token, bool& created);

// Whether `given` is `token`, in time that does not depend on where they differ (CRYPTO_memcmp).
bool token_matches(std::string_view given, std::string_view token);

}  // namespace perfsim::admin
