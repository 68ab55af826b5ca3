# wscsl_add_plugin(<name>
#                  SOURCES <file>...
#                  [LINK_LIBRARIES <target>...]
#                  [TESTS <file>...] [LOADER_TESTS <file>...]
#                  [TEST_LINK_LIBRARIES <target>...] [NO_INSTALL])
#
# Builds libwscsl_<name>.so as a MODULE (it can be loaded, never linked) with hidden symbols, so
# that only the two entry points WSCSL_PLUGIN defines are exported. It links WSCSL::sdk; a plugin
# that uses the dataset helpers or the plotting library adds WSCSL::data or WSCSL::plot to
# LINK_LIBRARIES. The same function builds the
# in-tree plugins and third-party plugins against an installed SDK (find_package(WSCSL)).
#
# TESTS become the executable <name>_tests, linked with the plugin's objects (so internal
# functions can be tested directly) and WSCSL::testing, and registered with CTest as
# plugin.<name>, run with WSCSL_PLUGIN_PATH pointing at the built plugin.
#
# LOADER_TESTS are tests that reach the plugin only through the loader (wscsl/testing/harness.hpp),
# each file with one GoogleTest suite of its own. The loader tests of every plugin of the project
# join one program, wscsl_plugin_loader_tests, compiled in batches like any target (a test unit's
# cost is mostly LibTorch's headers, paid once a batch); each plugin's run as plugin.<name>.
function(wscsl_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_INSTALL" ""
                        "SOURCES;LINK_LIBRARIES;TESTS;LOADER_TESTS;TEST_LINK_LIBRARIES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "wscsl_add_plugin(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "wscsl_add_plugin(${name}): SOURCES is required")
  endif()
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "wscsl_add_plugin(${name}): plugin names are lower_snake_case")
  endif()

  add_library(${name}_objects OBJECT ${ARG_SOURCES})
  target_link_libraries(${name}_objects PUBLIC WSCSL::sdk ${ARG_LINK_LIBRARIES})
  target_compile_definitions(${name}_objects PRIVATE WSCSL_PLUGIN_FILE_NAME="${name}")
  set_target_properties(${name}_objects PROPERTIES
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON POSITION_INDEPENDENT_CODE ON)
  target_compile_features(${name}_objects PUBLIC cxx_std_17)
  if(COMMAND wscsl_use_pch)
    wscsl_use_pch(${name}_objects)
  endif()

  add_library(${name} MODULE $<TARGET_OBJECTS:${name}_objects>)
  set_property(GLOBAL APPEND PROPERTY WSCSL_PLUGIN_TARGETS ${name})
  target_link_libraries(${name} PRIVATE WSCSL::sdk ${ARG_LINK_LIBRARIES})
  target_link_options(${name} PRIVATE "LINKER:-z,defs")
  set_target_properties(${name} PROPERTIES PREFIX "lib" OUTPUT_NAME "wscsl_${name}")
  if(DEFINED WSCSL_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${WSCSL_PLUGIN_OUTPUT_DIR}")
  endif()

  if(ARG_TESTS AND (NOT DEFINED WSCSL_BUILD_TESTS OR WSCSL_BUILD_TESTS))
    if(NOT TARGET GTest::gtest_main)
      find_package(GTest REQUIRED)
    endif()
    add_executable(${name}_tests ${ARG_TESTS})
    target_link_libraries(${name}_tests PRIVATE ${name}_objects WSCSL::testing GTest::gtest_main
                          ${ARG_TEST_LINK_LIBRARIES})
    if(COMMAND wscsl_use_pch)
      wscsl_use_pch(${name}_tests)
    endif()
    add_dependencies(${name}_tests ${name})
    add_test(NAME plugin.${name} COMMAND ${name}_tests)
    wscsl_plugin_test_environment(${name})
  endif()

  if(ARG_LOADER_TESTS AND (NOT DEFINED WSCSL_BUILD_TESTS OR WSCSL_BUILD_TESTS))
    wscsl_add_loader_tests(${name} "${ARG_LOADER_TESTS}"
                           "${ARG_LINK_LIBRARIES};${ARG_TEST_LINK_LIBRARIES}")
  endif()

  if(NOT ARG_NO_INSTALL)
    if(DEFINED WSCSL_PLUGIN_INSTALL_DIR)
      set(destination "${WSCSL_PLUGIN_INSTALL_DIR}")
    else()
      set(destination "lib/wscsl/plugins")
    endif()
    install(TARGETS ${name} LIBRARY DESTINATION "${destination}")
  endif()
endfunction()

# plugin.<name> runs with WSCSL_PLUGIN_PATH at the built plugin, and the image stores its tests build
# stay in the build tree, out of the user's cache.
function(wscsl_plugin_test_environment name)
  set_tests_properties(plugin.${name} PROPERTIES ENVIRONMENT
    "WSCSL_PLUGIN_PATH=$<TARGET_FILE_DIR:${name}>;XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test_cache")
endfunction()

# Records a plugin's loader tests for wscsl_add_loader_test_program(), which runs once, when the
# project's top folder has been read.
function(wscsl_add_loader_tests name files libraries)
  set(suites "")
  foreach(file IN LISTS files)
    get_filename_component(path "${file}" ABSOLUTE)
    file(STRINGS "${path}" lines REGEX "^TEST(_F)?\\([A-Za-z0-9_]+,")
    set(file_suites "")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^TEST(_F)?\\(([A-Za-z0-9_]+),.*" "\\2" suite "${line}")
      list(APPEND file_suites ${suite})
    endforeach()
    list(REMOVE_DUPLICATES file_suites)
    list(LENGTH file_suites count)
    if(NOT count EQUAL 1)
      message(FATAL_ERROR "wscsl_add_plugin(${name}): LOADER_TESTS file ${path} has ${count} test "
        "suites (${file_suites}); it needs exactly one, named after the plugin, as the tests of "
        "all plugins share one program")
    endif()
    list(APPEND suites ${file_suites})
    set_property(GLOBAL APPEND PROPERTY WSCSL_LOADER_TEST_SOURCES "${path}")
  endforeach()
  list(TRANSFORM suites APPEND ".*")
  list(JOIN suites ":" filter)
  set_property(GLOBAL APPEND PROPERTY WSCSL_LOADER_TEST_PLUGINS ${name})
  set_property(GLOBAL APPEND PROPERTY WSCSL_LOADER_TEST_LIBRARIES ${libraries})
  set_property(GLOBAL PROPERTY WSCSL_LOADER_TEST_FILTER_${name} "${filter}")
  get_property(scheduled GLOBAL PROPERTY WSCSL_LOADER_TEST_PROGRAM_SCHEDULED)
  if(NOT scheduled)
    set_property(GLOBAL PROPERTY WSCSL_LOADER_TEST_PROGRAM_SCHEDULED ON)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL wscsl_add_loader_test_program)
  endif()
endfunction()

function(wscsl_add_loader_test_program)
  get_property(sources GLOBAL PROPERTY WSCSL_LOADER_TEST_SOURCES)
  get_property(plugins GLOBAL PROPERTY WSCSL_LOADER_TEST_PLUGINS)
  get_property(libraries GLOBAL PROPERTY WSCSL_LOADER_TEST_LIBRARIES)
  list(REMOVE_DUPLICATES libraries)
  if(NOT TARGET GTest::gtest_main)
    find_package(GTest REQUIRED)
  endif()
  add_executable(wscsl_plugin_loader_tests ${sources})
  target_link_libraries(wscsl_plugin_loader_tests PRIVATE WSCSL::testing GTest::gtest_main
                        ${libraries})
  if(COMMAND wscsl_use_pch)
    wscsl_use_pch(wscsl_plugin_loader_tests)
  endif()
  add_dependencies(wscsl_plugin_loader_tests ${plugins})
  foreach(name IN LISTS plugins)
    get_property(filter GLOBAL PROPERTY WSCSL_LOADER_TEST_FILTER_${name})
    add_test(NAME plugin.${name} COMMAND wscsl_plugin_loader_tests --gtest_filter=${filter})
    wscsl_plugin_test_environment(${name})
  endforeach()
endfunction()

# wscsl_torch_cuda(<variable>) sets <variable> to 1 when the LibTorch that find_package(Torch)
# found is a CUDA build, else 0. WSCSL::sdk passes it on as WSCSL_TORCH_CUDA, part of the LibTorch
# identity every plugin records and the host compares (toolchain.hpp). The Torch package sets
# CAFFE2_USE_CUDA and defines torch_cuda only for CUDA builds.
function(wscsl_torch_cuda variable)
  if(CAFFE2_USE_CUDA OR TARGET torch_cuda)
    set(${variable} 1 PARENT_SCOPE)
  else()
    set(${variable} 0 PARENT_SCOPE)
  endif()
endfunction()

# wscsl_link_wheel_libraries() makes the linker resolve a PyTorch wheel's libraries' own
# dependencies (libnccl.so.2, cuDNN, cuBLAS…) in the NVIDIA wheels beside it, as the loader does
# through their RUNPATH ($ORIGIN/../../nvidia/<name>/lib). Without it the linker looks first in
# the -rpath folders of the link, where a CUDA toolkit's own, older libnccl.so.2 (its lib/) answers
# for the wheel's and the executables fail to link on NCCL symbols the wheel's torch needs. For the
# targets defined after the call in the calling folder (WSCSLConfig.cmake calls it for the
# project that finds WSCSL); nothing for a LibTorch that is not a wheel.
function(wscsl_link_wheel_libraries)
  file(GLOB wheel_library_dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
  foreach(dir IN LISTS wheel_library_dirs)
    add_link_options("LINKER:-rpath-link,${dir}")
  endforeach()
endfunction()
