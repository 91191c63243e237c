#include "tma/scenario/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tma {

std::string clock_text(double seconds) {
  const long t = std::lround(std::max(0.0, seconds));
  char b[32];
  if (t >= 3600) std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
  return b;
}

std::string progress_text(double done, double total, double done_at_start, double elapsed_s) {
  const double fraction = total > 0 ? std::min(1.0, done / total) : 1.0;
  char b[64];
  std::snprintf(b, sizeof b, "%.0f%%", std::floor(100 * fraction));
  std::string s = b;
  const double rate = elapsed_s > 0 ? (done - done_at_start) / elapsed_s : 0;
  if (rate > 0 && done < total) s += ", about " + clock_text((total - done) / rate) + " left";
  return s;
}

double progress_interval(double default_s) {
  const char* v = std::getenv("TMA_PROGRESS_INTERVAL");
  if (!v || !*v) return default_s;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return *end || !std::isfinite(s) || s < 0 ? default_s : s;
}

}  // namespace tma
