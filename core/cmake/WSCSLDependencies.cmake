# How wscsl and the plugins built against its installed package find what they share besides
# LibTorch: the dependency prefix of scripts/deps-prefix.sh, and fmt. Used by the build and by
# WSCSLConfig.cmake.

# wscsl_use_dependency_prefix(<dir>): search <dir>, a prefix made by scripts/deps-prefix.sh, for
# what the system lacks. It is searched after the system's own folders, so that a package the
# system has wins. A macro: the search path is the caller's.
macro(wscsl_use_dependency_prefix dir)
  if(NOT EXISTS "${dir}/.wscsl-deps-stamp")
    message(FATAL_ERROR "${dir} is not a dependency prefix made by scripts/deps-prefix.sh (it has "
                        "no .wscsl-deps-stamp): make one with scripts/deps-prefix.sh --out <dir>")
  endif()
  list(APPEND CMAKE_SYSTEM_PREFIX_PATH "${dir}")
endmacro()

# wscsl_find_fmt(): the target fmt::fmt. A LibTorch that ships fmt's headers in its own folder
# (PyTorch's wheels) compiles its headers against them, so every wscsl target uses those headers,
# header-only, and one fmt is used throughout; otherwise the system's fmt, else the prefix's.
function(wscsl_find_fmt)
  if(TARGET fmt::fmt)
    return()
  endif()
  set(torch_fmt "${TORCH_INSTALL_PREFIX}/include")
  if(TORCH_INSTALL_PREFIX AND NOT TORCH_INSTALL_PREFIX MATCHES "^/usr(/local)?/?$"
     AND EXISTS "${torch_fmt}/fmt/format.h")
    # A folder holding only fmt/ of LibTorch's include folder: the libraries built without LibTorch
    # must not see its other headers (an older Protocol Buffers' among them).
    set(fmt_only "${CMAKE_BINARY_DIR}/wscsl_torch_fmt")
    if(NOT IS_SYMLINK "${fmt_only}/fmt")
      file(MAKE_DIRECTORY "${fmt_only}")
      file(CREATE_LINK "${torch_fmt}/fmt" "${fmt_only}/fmt" SYMBOLIC)
    endif()
    add_library(fmt::fmt INTERFACE IMPORTED GLOBAL)
    set_target_properties(fmt::fmt PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${fmt_only}"
      INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY)
    message(STATUS "fmt: the headers LibTorch ships (${torch_fmt}/fmt), header-only")
  else()
    find_package(fmt 9 REQUIRED)
  endif()
endfunction()
