// The admin token's file (admin/token.h): made when missing, mode 0600 and exclusive; read when
// there; refused, saying what to do, when others may read it, it is a link, or its text is no token.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "admin/token.h"
#include "tests/admin/rig.h"

namespace {
namespace fs = std::filesystem;
namespace admin = perfsim::admin;

bool mentions(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void write_file(const fs::path& p, const std::string& text, fs::perms mode) {
  std::ofstream(p) << text;
  fs::permissions(p, mode);
}
}  // namespace

TEST_CASE("admin token file: made when missing, 64 hex digits, mode 0600, then read back the same") {
  perfsim::testing::ScratchDir dir;
  const std::string path = (dir.path / "admin.token").string();
  std::string token, again;
  bool created = false;
  REQUIRE(admin::load_or_create_token(path, token, created).ok());
  CHECK(created);
  CHECK(token.size() == 64);
  CHECK(token.find_first_not_of("0123456789abcdef") == std::string::npos);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(admin::load_or_create_token(path, again, created).ok());
  CHECK_FALSE(created);
  CHECK(again == token);
  // Another file gets another token.
  std::string other;
  REQUIRE(admin::load_or_create_token((dir.path / "b.token").string(), other, created).ok());
  CHECK(other != token);
}

TEST_CASE("admin token file: a file others may read, a link, and a text that is no token are refused") {
  perfsim::testing::ScratchDir dir;
  std::string token;
  bool created = false;
  const fs::path open = dir.path / "open.token";
  write_file(open, "0123456789abcdef0123\n",
             fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  perfsim::Status st = admin::load_or_create_token(open.string(), token, created);
  CHECK_FALSE(st.ok());
  CHECK(mentions(st.message(), "mode 0644"));
  CHECK(mentions(st.message(), "chmod 600 " + open.string()));
  CHECK(token.empty());

  const fs::path good = dir.path / "good.token";
  write_file(good, "0123456789abcdef0123\n", fs::perms::owner_read | fs::perms::owner_write);
  REQUIRE(admin::load_or_create_token(good.string(), token, created).ok());
  CHECK(token == "0123456789abcdef0123");  // the line's end is not part of it
  token.clear();
  const fs::path link = dir.path / "link.token";
  fs::create_symlink(good, link);
  st = admin::load_or_create_token(link.string(), token, created);
  CHECK_FALSE(st.ok());
  CHECK(mentions(st.message(), "symbolic link"));

  for (const std::string& text : {std::string("short\n"), std::string("has a space in it here\n"),
                                  std::string(300, 'a'), std::string("two\nlines-of-sixteen-chars\n")}) {
    const fs::path bad = dir.path / "bad.token";
    write_file(bad, text, fs::perms::owner_read | fs::perms::owner_write);
    st = admin::load_or_create_token(bad.string(), token, created);
    INFO(text);
    CHECK_FALSE(st.ok());
    CHECK(mentions(st.message(), "RFC 6750"));
    fs::remove(bad);
  }
}

TEST_CASE("admin token: equal only when the whole token is given") {
  CHECK(admin::token_matches("0123456789abcdef", "0123456789abcdef"));
  CHECK_FALSE(admin::token_matches("0123456789abcdeF", "0123456789abcdef"));
  CHECK_FALSE(admin::token_matches("0123456789abcde", "0123456789abcdef"));
  CHECK_FALSE(admin::token_matches("", ""));
}
