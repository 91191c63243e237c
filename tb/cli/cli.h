// tma-sim subcommands. Each takes the arguments after its name and returns the exit status.
#pragma once

namespace tma::cli {

int check(int argc, char** argv);
int run(int argc, char** argv);
int bench(int argc, char** argv);
int regress(int argc, char** argv);
int regress_merge(int argc, char** argv);
int regress_selftest(int argc, char** argv);  // hidden: fault injection for the runner's tests
int sweep(int argc, char** argv);
int random(int argc, char** argv);
int coverage(int argc, char** argv);
int trace(int argc, char** argv);

}  // namespace tma::cli
