// The project folder compiled into the libraries (tb/config/paths.h, built_in_project_root): this
// file is built twice, as tma_config_root (TMA_BUILT_IN_ROOT: the source folder; the build tree's
// programs and tests) and tma_config_root_installed (<prefix>/share/tma; what `cmake --install`
// installs and the TmaTlm package links).
#include "tma/config/paths.h"

namespace tma {

const char* built_in_project_root() { return TMA_BUILT_IN_ROOT; }

}  // namespace tma
