// Loading the job key from a file or the environment (job_key_source.hpp).
#include "backends/hw/auth/job_key_source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace railcheck::hw {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// Trailing "\n" or "\r\n" is the editor's, not the key's (`openssl rand -hex 32 > key` writes one).
std::size_t without_newline(const std::vector<std::uint8_t>& b) {
  std::size_t n = b.size();
  if (n > 0 && b[n - 1] == '\n') --n;
  if (n > 0 && b[n - 1] == '\r') --n;
  return n;
}

Error key_error(const std::string& where, const Error& e) { return Error{where + ": " + e.what, e.hint}; }

}  // namespace

Result<auth::JobKey> read_job_key_file(const std::string& path) {
  const std::string where = fmt::format("job key file {}", path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error{fmt::format("{}: open failed: {}", where, std::strerror(errno)),
                 fmt::format("set {} to a readable file made by: openssl rand -hex 32", kJobKeyFileEnv)};
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{where + ": not a regular file", "point it at the file holding the key"};
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    ::close(fd);
    // ssh's rule for private keys: a key others can read is a key others may hold.
    return Error{fmt::format("{}: readable by group or others (mode {:03o})", where, st.st_mode & 0777),
                 fmt::format("chmod 600 {}", path)};
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(std::min<off_t>(st.st_size, auth::kMaxKeyBytes + 2)));
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  auto key = auth::JobKey::from_bytes(std::span(bytes).first(without_newline(bytes)));
  OPENSSL_cleanse(bytes.data(), bytes.size());
  if (!key) return key_error(where, key.error());
  return key;
}

Result<JobKeySetting> job_key_from_environment() {
  const char* file = env(kJobKeyFileEnv);
  const char* text = env(kJobKeyEnv);
  const char* mode = env(kJobAuthEnv);
  if (mode != nullptr && std::strcmp(mode, "off") != 0 && std::strcmp(mode, "on") != 0) {
    return Error{fmt::format("{}={} is not on or off", kJobAuthEnv, mode),
                 "leave it unset (authentication is on) or set it to off"};
  }
  const bool off = mode != nullptr && std::strcmp(mode, "off") == 0;
  if (file != nullptr && text != nullptr) {
    return Error{fmt::format("both {} and {} are set", kJobKeyFileEnv, kJobKeyEnv), "set one of them"};
  }
  if (off) {
    if (file != nullptr || text != nullptr) {
      return Error{fmt::format("{}=off, but a job key is set too", kJobAuthEnv),
                   fmt::format("unset {} or the key variable", kJobAuthEnv)};
    }
    return JobKeySetting{std::nullopt, true, fmt::format("{}=off", kJobAuthEnv)};
  }
  if (file != nullptr) {
    auto key = read_job_key_file(file);
    if (!key) return key.error();
    return JobKeySetting{std::move(key).value(), false, fmt::format("{}={}", kJobKeyFileEnv, file)};
  }
  if (text != nullptr) {
    const std::string_view v(text);
    auto key = auth::JobKey::from_bytes({reinterpret_cast<const std::uint8_t*>(v.data()), v.size()});
    if (!key) return key_error(kJobKeyEnv, key.error());
    return JobKeySetting{std::move(key).value(), false, kJobKeyEnv};
  }
  return Error{"no job key: every frame between ranks is authenticated (issue 46)",
               fmt::format("set {} (a file made by: openssl rand -hex 32, mode 600) on every rank, or {}=off to run "
                           "unauthenticated (docs/security.md)",
                           kJobKeyFileEnv, kJobAuthEnv)};
}

}  // namespace railcheck::hw
