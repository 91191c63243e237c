#include "fuzz_support.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace tma::fuzz {

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tma-fuzz-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) fail("cannot make a temporary folder from " + tmpl);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

const std::string& temp_dir() {
  static TempDir dir;
  return dir.path;
}

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) fail("cannot write " + path);
}

TextInput parse_text_input(const uint8_t* data, size_t size) {
  TextInput in;
  in.text.assign(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < in.text.size()) {
    size_t end = in.text.find('\n', start);
    if (end == std::string::npos) end = in.text.size();
    const std::string line = in.text.substr(start, end - start);
    if (line.rfind("#@files", 0) == 0) {
      const char* p = line.c_str() + 7;
      while (in.file_sizes.size() < 2) {
        char* stop = nullptr;
        const unsigned long long v = std::strtoull(p, &stop, 10);
        if (stop == p) break;
        in.file_sizes.push_back(std::min<unsigned long long>(v, 1u << 20));
        p = stop;
      }
    } else if (line.rfind("#@set ", 0) == 0 && in.overrides.size() < 16) {
      in.overrides.push_back(line.substr(6));
    }
    start = end + 1;
  }
  return in;
}

}  // namespace tma::fuzz
