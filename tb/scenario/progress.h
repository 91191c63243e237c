// Progress of long commands (tma-sim run, regress, sweep) on stderr: how much of the work is done
// and an estimate of the time left, from the rate of the work done so far.
#pragma once

#include <string>

namespace tma {

// "1:05" (minutes:seconds), "2:03:04" past an hour.
std::string clock_text(double seconds);

// "45%, about 1:20 left": `done` of `total` units of work, `done - done_at_start` of them done in
// `elapsed_s` (work finished before, e.g. a resumed run's jobs, does not make the rate). Without
// a rate yet, the percentage alone.
std::string progress_text(double done, double total, double done_at_start, double elapsed_s);

// Seconds between progress lines: the environment's TMA_PROGRESS_INTERVAL when it is a number
// (0: at every chance), else `default_s`.
double progress_interval(double default_s);

}  // namespace tma
