# takt_generate_messages(TARGET
#     PACKAGES pkg... | FILES path/pkg/msg/Type.msg ...
#     [SEARCH_ROOT dir...] [SEARCH pkg=dir ...] [BOUNDS file...] [BOUND pkg/Type.field=N ...]
#     [ROS2 | ROSCPP] [REGISTRY name])
# ROS2: the definitions are ROS 2's (types pkg/msg/Type, headers <pkg/msg/Type.h>).
# REGISTRY: the name of the library's registry of its types (<name>_registry.h, <name>_find, ...),
# by default TARGET's, which must then be a C identifier: every library has its own, so that two
# linked into one program do not define the same symbols (`takt msggen --registry`).
# Every type the definitions depend on is generated into TARGET too; with another library of them
# in the same program, see docs/messages.md ("Registries, and two libraries in one program").
# ROSCPP: headers in roscpp's layout for the roscpp-compatible API (`takt msggen --roscpp`):
# TARGET is then an interface library of headers that links takt::roscpp (docs/ros1.md).
# Runs `takt msggen` at build time (again whenever a definition or the generator changes) and
# builds the generated C into the static library TARGET, whose include directory carries
# <pkg>/<Type>.h for C and C++. TARGET links takt::takt.
#
# In takt's own tree the generator is python/takt/msggen; from an installed takt (after
# find_package(takt CONFIG), whose taktConfig.cmake sets TAKT_PYTHON_DIR and includes this file)
# it is the copy installed with the package, so a user's project needs nothing else.
if(NOT TAKT_PYTHON_DIR)
  set(TAKT_PYTHON_DIR ${CMAKE_CURRENT_LIST_DIR}/../python)
endif()
get_filename_component(_takt_pydir "${TAKT_PYTHON_DIR}" ABSOLUTE)
set_property(GLOBAL PROPERTY TAKT_MSGGEN_PYTHONPATH "${_takt_pydir}")
unset(_takt_pydir)

function(takt_generate_messages target)
  cmake_parse_arguments(G "ROS2;ROSCPP" "REGISTRY" "PACKAGES;FILES;SEARCH_ROOT;SEARCH;BOUNDS;BOUND" ${ARGN})
  if("REGISTRY" IN_LIST G_KEYWORDS_MISSING_VALUES)
    set(G_REGISTRY "")
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target})
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(args --out ${out})
  if(G_ROS2)
    list(APPEND args --ros2)
  endif()
  if(G_ROSCPP)
    if(DEFINED G_REGISTRY)
      message(FATAL_ERROR "takt_generate_messages(${target}): REGISTRY and ROSCPP exclude each other "
                          "(roscpp's headers have no registry)")
    endif()
    list(APPEND args --roscpp)
  else()
    if(NOT DEFINED G_REGISTRY)
      set(G_REGISTRY ${target})
    endif()
    # as `takt msggen --registry` checks it (keywords left to it), but naming what to change here
    if(NOT G_REGISTRY MATCHES "^[A-Za-z][A-Za-z0-9_]*$" OR G_REGISTRY MATCHES "__")
      message(FATAL_ERROR "takt_generate_messages(${target}): the registry name '${G_REGISTRY}' is not "
                          "a C identifier (a letter, then letters, digits and single '_'); it is the "
                          "target's name unless REGISTRY <name> gives another")
    endif()
    list(APPEND args --registry ${G_REGISTRY})
  endif()
  foreach(r ${G_SEARCH_ROOT})
    list(APPEND args --search-root ${r})
  endforeach()
  foreach(s ${G_SEARCH})
    list(APPEND args --search ${s})
  endforeach()
  foreach(b ${G_BOUNDS})
    list(APPEND args --bounds ${b})
  endforeach()
  foreach(b ${G_BOUND})
    list(APPEND args --bound ${b})
  endforeach()
  list(APPEND args ${G_PACKAGES} ${G_FILES})
  get_property(pydir GLOBAL PROPERTY TAKT_MSGGEN_PYTHONPATH)
  set(gen ${CMAKE_COMMAND} -E env PYTHONPATH=${pydir} ${Python3_EXECUTABLE} -m takt.msggen)
  execute_process(COMMAND ${gen} ${args} --list OUTPUT_VARIABLE files ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "takt msggen: ${err}")
  endif()
  string(REPLACE "\n" ";" files "${files}")
  list(FILTER files EXCLUDE REGEX "^$")
  # a registry generated under another name before (REGISTRY changed, or a takt that named every
  # registry takt_msgs) would stay in the include directory beside the new one
  file(GLOB stale ${out}/include/*_registry.h ${out}/src/*_registry.c)
  foreach(f ${stale})
    if(NOT f IN_LIST files)
      file(REMOVE ${f})
    endif()
  endforeach()
  set(sources ${files})
  list(FILTER sources INCLUDE REGEX "\\.c$")
  # what the generation depends on: the generator and every definition it reads
  file(GLOB gen_py ${pydir}/takt/msggen/*.py ${pydir}/takt/msggen/*.txt)
  set(defs ${G_FILES} ${G_BOUNDS})
  foreach(p ${G_PACKAGES})
    foreach(r ${G_SEARCH_ROOT})
      file(GLOB d ${r}/${p}/msg/*.msg ${r}/${p}/srv/*.srv)
      list(APPEND defs ${d})
    endforeach()
  endforeach()
  add_custom_command(OUTPUT ${files} COMMAND ${gen} ${args} DEPENDS ${gen_py} ${defs}
                     COMMENT "takt msggen: ${target}" VERBATIM)
  if(G_ROSCPP)
    add_custom_target(${target}_headers DEPENDS ${files})
    add_library(${target} INTERFACE)
    add_dependencies(${target} ${target}_headers)
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${out}/include>)
    target_link_libraries(${target} INTERFACE takt::roscpp)
    return()
  endif()
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${out}/include>)
  target_link_libraries(${target} PUBLIC takt::takt)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(TARGET takt_port) # takt's own tree: generated code must build without a warning
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
