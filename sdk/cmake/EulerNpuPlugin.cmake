# eulernpu_add_plugin(<target> SOURCES <src>... [OUTPUT_NAME <name>])
#
# Builds an eulernpu plugin: a MODULE library with hidden visibility whose
# only exported symbol is enp_plugin_entry (a linker version script enforces
# it), linked with -z defs so a missing symbol fails the build, not the load.
set(_EULERNPU_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/plugin.map")

function(eulernpu_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE EulerNpu::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  if(ARG_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_EULERNPU_PLUGIN_MAP}")
  # A sanitized plugin leaves the sanitizer's symbols to the executable.
  if(NOT EULERNPU_SANITIZE)
    target_link_options(${target} PRIVATE "LINKER:-z,defs")
  endif()
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
    "${_EULERNPU_PLUGIN_MAP}")
endfunction()
