# What `cmake --install BUILD [--prefix P]` (and `make install PREFIX=P`) puts under the prefix,
# every path relative to it so the tree can be moved (or packaged: cpack -G DEB):
#
#   include/takt/*.h, *.hpp             the public headers, config.h as this build configured them
#   include/takt/msgs/<pkg>/<Type>.h    the generated standard message types (takt::std_msgs)
#   lib/libtakt_<layer>.a               the layers: port, core, timing, exec, transport, shm, introspect, system
#   lib/libtakt_std_msgs.a              std_msgs, std_srvs, geometry_msgs, sensor_msgs
#   lib/cmake/takt/                     find_package(takt CONFIG): takt::<layer>, takt::takt,
#                                       takt::std_msgs and takt_generate_messages()
#   lib/pkgconfig/takt.pc               pkg-config: takt, takt-system, takt-std-msgs
#   lib/takt/python/takt/               the Python package of the CLI (with the message generator)
#   libexec/takt/                       the native programs the CLI runs (takt-run, takt-sizes)
#   bin/takt                            the CLI
#   share/takt/examples/                the example systems (`takt demo`) and user_project/
include(CMakePackageConfigHelpers)

set(TAKT_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/takt)
set(TAKT_PYDIR ${CMAKE_INSTALL_LIBDIR}/takt/python)
set(TAKT_LIBEXECDIR ${CMAKE_INSTALL_LIBEXECDIR}/takt)
set(TAKT_DATADIR ${CMAKE_INSTALL_DATADIR}/takt)
set(TAKT_PCDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- headers: the source tree's and the generated configuration (takt/features.h includes it,
# so an installed header sees the feature set the installed libraries were compiled with)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/takt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/takt/config.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/takt)

# ---- libraries and the CMake package
get_property(takt_installed_targets GLOBAL PROPERTY TAKT_LAYERS) # takt_layer() records them
list(APPEND takt_installed_targets takt)
if(TARGET takt_system)
  list(APPEND takt_installed_targets takt_system)
endif()
if(TARGET takt_std_msgs)
  list(APPEND takt_installed_targets takt_std_msgs)
  set_target_properties(takt_std_msgs PROPERTIES EXPORT_NAME std_msgs)
  target_include_directories(takt_std_msgs INTERFACE
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/takt/msgs>)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/msgs/takt_std_msgs/include/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/takt/msgs)
endif()
install(TARGETS ${takt_installed_targets} EXPORT taktTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT taktTargets NAMESPACE takt:: DESTINATION ${TAKT_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/taktConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/taktConfig.cmake
                              INSTALL_DESTINATION ${TAKT_CMAKEDIR}
                              PATH_VARS TAKT_PYDIR TAKT_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/taktConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/taktConfig.cmake ${PROJECT_BINARY_DIR}/taktConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TaktMessages.cmake
        DESTINATION ${TAKT_CMAKEDIR})

# ---- pkg-config: ${pcfiledir} makes the files relocatable like the CMake package
file(RELATIVE_PATH TAKT_PC_PREFIX /prefix/${TAKT_PCDIR} /prefix)
# the layers, top first (takt_layer() is called bottom up), as a static link wants them
get_property(takt_pc_layers GLOBAL PROPERTY TAKT_LAYERS)
list(REVERSE takt_pc_layers)
list(TRANSFORM takt_pc_layers PREPEND "-l")
string(JOIN " " TAKT_PC_LAYER_LIBS ${takt_pc_layers})
set(TAKT_PC_LINK_OPTIONS "-pthread")
if(TARGET takt_dds) # Cyclone, and the export of takt's ddsi_tl_handle_reply (src/dds/dds_backend.c)
  string(APPEND TAKT_PC_LINK_OPTIONS " -lddsc -Wl,--export-dynamic-symbol=ddsi_tl_handle_reply")
endif()
if(TAKT_SANITIZE)
  string(APPEND TAKT_PC_LINK_OPTIONS " -fsanitize=${TAKT_SANITIZE}")
endif()
set(takt_pc_files takt)
set(TAKT_PC_SYSTEM_EXTRA "")
if(TARGET takt_std_msgs) # the system layer's ros1 section uses the generated types' registry
  set(TAKT_PC_SYSTEM_EXTRA "-ltakt_std_msgs")
endif()
if(TARGET takt_system)
  list(APPEND takt_pc_files takt-system)
endif()
if(TARGET takt_std_msgs)
  list(APPEND takt_pc_files takt-std-msgs)
endif()
foreach(pc ${takt_pc_files})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc DESTINATION ${TAKT_PCDIR})
endforeach()

# ---- the CLI: the Python package in a directory of its own (no site-packages to choose), the
# native programs it runs, and bin/takt. takt/install_layout.py tells the package where those are.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/takt DESTINATION ${TAKT_PYDIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "*.txt" PATTERN "__pycache__" EXCLUDE)
file(RELATIVE_PATH TAKT_PY_TO_LIBEXEC /prefix/${TAKT_PYDIR}/takt /prefix/${TAKT_LIBEXECDIR})
file(RELATIVE_PATH TAKT_PY_TO_DATA /prefix/${TAKT_PYDIR}/takt /prefix/${TAKT_DATADIR})
file(RELATIVE_PATH TAKT_BIN_TO_PY /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${TAKT_PYDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/install_layout.py.in ${PROJECT_BINARY_DIR}/python/install_layout.py @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/python/install_layout.py DESTINATION ${TAKT_PYDIR}/takt)
configure_file(${PROJECT_SOURCE_DIR}/cmake/takt-cli.in ${PROJECT_BINARY_DIR}/python/takt @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/python/takt DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(program takt-run takt-sizes takt-msgtool takt-master)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${TAKT_LIBEXECDIR})
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/examples/robot.yaml ${PROJECT_SOURCE_DIR}/examples/sensor_fusion.yaml
              ${PROJECT_SOURCE_DIR}/examples/link_agent.yaml ${PROJECT_SOURCE_DIR}/examples/link_micro.yaml
        DESTINATION ${TAKT_DATADIR}/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/user_project DESTINATION ${TAKT_DATADIR}/examples
        PATTERN "build*" EXCLUDE)

# ---- a Debian package of the same tree: `cpack -G DEB` in the build directory
set(CPACK_PACKAGE_NAME takt)
set(CPACK_PACKAGE_VENDOR "takt")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "takt real-time robotics middleware: libraries, headers, CLI")
set(CPACK_PACKAGE_CONTACT "takt maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# libyaml-dev: takt::system and takt-system.pc link -lyaml
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.9), libyaml-dev")
set(CPACK_GENERATOR DEB)
include(CPack)
