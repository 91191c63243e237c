#include "tma/regress/regress_util.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tma/config/cli_args.h"
#include "tma/core/splitmix64.h"

namespace fs = std::filesystem;

namespace tma::regress {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') break;  // not allowed in XML 1.0
        if (c == 0x7f) break;
        if (c >= 0x80) {
          // Keep well-formed UTF-8 sequences, drop stray bytes (an XML parser rejects them).
          int n = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
          bool ok = n > 0 && i + n < s.size();
          for (int k = 1; ok && k <= n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
          if (!ok) break;
          out.append(s, i, static_cast<size_t>(n) + 1);
          i += static_cast<size_t>(n);
          break;
        }
        out += static_cast<char>(c);
    }
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                        "@%_-+=:,./") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

std::string printable(const std::string& s, size_t max_len) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max_len) break;
    out += (c == '\t') ? ' ' : (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string file_safe(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (std::isalnum(c) || c == '_' || c == '-' || c == '.') ? static_cast<char>(c) : '_';
  return out;
}

std::string format_seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", s);
  return b;
}

std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t job_seed(uint64_t base, uint64_t k) {
  return k == 0 ? base : splitmix64_mix(splitmix64_mix(base) + k) & 0xffffffffull;
}

uint64_t entry_seed(uint64_t run_seed, const std::string& name) {
  return splitmix64_mix(run_seed ^ fnv1a64(name)) & 0xffffffffull;
}

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw cli::UsageError("--shard '" + text + "': expected K/N, e.g. 0/4");
  Shard s{static_cast<uint32_t>(cli::parse_uint("--shard K", text.substr(0, slash), 0, 999999999)),
          static_cast<uint32_t>(cli::parse_uint("--shard N", text.substr(slash + 1), 1, 999999999))};
  if (s.index >= s.count)
    throw cli::UsageError("--shard '" + text + "': K must be in [0, N-1] (shards count from 0)");
  return s;
}

std::vector<std::string> shard_ids(std::vector<std::string> ids, const Shard& shard) {
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < ids.size(); ++i)
    if (i % shard.count == shard.index) out.push_back(ids[i]);
  return out;
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  const char* p = text.data();
  size_t left = text.size();
  while (left) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string make_unique_dir(const std::string& parent, const std::string& base) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error("cannot create " + parent + ": " + ec.message());
  for (int n = 1; n < 100000; ++n) {
    const std::string dir = (fs::path(parent) / (n == 1 ? base : base + "-" + std::to_string(n))).string();
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
  }
  throw std::runtime_error("cannot find a free folder name for " + base + " under " + parent);
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "tma-sim";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace tma::regress
