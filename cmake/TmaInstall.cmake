# `cmake --install build [--prefix P]` (docs/integration.md, "Installing"):
#   P/include/tma/<concern>/*.h        the headers, included as <tma/<concern>/<file>.h>
#   P/lib/libtma_<concern>.a           one static library per concern
#   P/lib/cmake/TmaTlm/                the CMake package: find_package(TmaTlm 0.2) -> TmaTlm::<concern>
#   P/lib/pkgconfig/tma-tlm.pc         everything; tma-tlm-reference.pc: the reference engine alone
#   P/bin/tma-sim                      the tool (finds P/share/tma from its own folder)
#   P/share/tma/configs/, tests/golden/  architectures, scenarios, regressions, sweeps; silicon goldens
#   P/share/doc/tma-tlm/               README, LICENSE, docs/
include(CMakePackageConfigHelpers)

set(TMA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TmaTlm)

# Headers: every concern a library is built from (tb/cli is the tool's own).
foreach(concern ${TMA_MODEL_CONCERNS})
  install(DIRECTORY model/${concern}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tma/${concern}
          FILES_MATCHING PATTERN "*.h")
endforeach()
foreach(concern ${TMA_TB_CONCERNS})
  if(NOT concern STREQUAL "cli")
    install(DIRECTORY tb/${concern}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tma/${concern}
            FILES_MATCHING PATTERN "*.h")
  endif()
endforeach()

# Libraries, exported as TmaTlm::<concern> (TmaTlm::model: the whole SystemC model).
set(TMA_EXPORTED tma_descriptor tma_core tma_tma tma_memory tma_gpu tma_model tma_config
    tma_config_root_installed tma_reference tma_golden tma_golden_tlm tma_scenario tma_regress)
foreach(t ${TMA_EXPORTED})
  get_target_property(export_name ${t} EXPORT_NAME)
  if(NOT export_name)
    string(REGEX REPLACE "^tma_" "" export_name ${t})
    set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
  endif()
endforeach()
install(TARGETS ${TMA_EXPORTED} EXPORT TmaTlmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tma_dpi)
  install(TARGETS tma_dpi EXPORT TmaTlmTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES tb/bindings/tma_dpi_pkg.sv DESTINATION ${TMA_SHARE_INSTALL_DIR}/sv)
endif()
if(TARGET tma_python)
  install(TARGETS tma_python LIBRARY DESTINATION ${TMA_PYTHON_INSTALL_DIR})
endif()
install(EXPORT TmaTlmTargets NAMESPACE TmaTlm:: DESTINATION ${TMA_INSTALL_CMAKEDIR})
if(TMA_BUILD_TOOLS)
  install(TARGETS tma-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(cmake/TmaTlmConfig.cmake.in ${PROJECT_BINARY_DIR}/TmaTlmConfig.cmake
                              INSTALL_DESTINATION ${TMA_INSTALL_CMAKEDIR}
                              PATH_VARS TMA_SHARE_INSTALL_DIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TmaTlmConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TmaTlmConfig.cmake ${PROJECT_BINARY_DIR}/TmaTlmConfigVersion.cmake
        DESTINATION ${TMA_INSTALL_CMAKEDIR})

# pkg-config: prefix-relative, so a copy moved elsewhere still works with PKG_CONFIG_PATH.
foreach(pc tma-tlm tma-tlm-reference)
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# What a run reads: configs/ (paths inside are relative to the project folder, which for an
# installed copy is P/share/tma) and the silicon golden cases (the regression file names them).
install(DIRECTORY configs DESTINATION ${TMA_SHARE_INSTALL_DIR})
foreach(set silicon silicon_holdout silicon_seed3 silicon_h100)
  install(DIRECTORY tests/golden/${set} DESTINATION ${TMA_SHARE_INSTALL_DIR}/tests/golden)
endforeach()
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
