# Proves that a plugin ships without rebuilding wscsl: install the SDK, build the out-of-tree
# example against the *installed* package, run its tests, and train a pipeline with it using the
# *installed* wscsl.  Arguments: BUILD_DIR, SOURCE_DIR, WORK_DIR, TORCH_PREFIX_PATH (the build's
# CMAKE_PREFIX_PATH, where a LibTorch outside the system's folders is, its entries joined by '|').
file(REMOVE_RECURSE "${WORK_DIR}")

function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${description} failed (${status}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix "${WORK_DIR}/prefix")
run_step("installing the SDK" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(installed bin/wscsl include/wscsl/sdk.hpp include/wscsl/data/image_dataset.hpp
                  include/wscsl/testing/harness.hpp lib/cmake/WSCSL/WSCSLConfig.cmake
                  lib/libwscsl_sdk.so lib/libwscsl_data.so lib/wscsl/plugins/libwscsl_discovernet.so)
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "the installed SDK lacks ${installed}")
  endif()
endforeach()

# The example is copied as a user would copy the template, and built in its own build/ folder,
# which its pipeline names relative to itself ([plugins] paths = ["build"]).
set(example "${WORK_DIR}/example")
file(MAKE_DIRECTORY "${example}")
file(COPY "${SOURCE_DIR}/examples/out_of_tree_plugin/" DESTINATION "${example}"
     PATTERN "build" EXCLUDE)
foreach(shipped README.md CMakeLists.txt pipeline.toml)
  if(NOT EXISTS "${example}/${shipped}")
    message(FATAL_ERROR "the out-of-tree template lacks ${shipped}")
  endif()
endforeach()

string(REPLACE "|" ";" torch_prefix_path "${TORCH_PREFIX_PATH}")
find_program(ccache ccache)
set(launcher "")
if(ccache)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${ccache}")
endif()
# The search path through the environment, ':'-separated: a ';' in a -D argument would split it
# into two arguments here (execute_process takes a list).
string(REPLACE ";" ":" search_path "${prefix};${torch_prefix_path}")
run_step("configuring the out-of-tree plugin" ${CMAKE_COMMAND} -E env
  "CMAKE_PREFIX_PATH=${search_path}" ${CMAKE_COMMAND} -S "${example}" -B "${example}/build"
  -DCMAKE_BUILD_TYPE=Release ${launcher})
run_step("building the out-of-tree plugin" ${CMAKE_COMMAND} --build "${example}/build" -j2)
run_step("testing the out-of-tree plugin" ${CMAKE_CTEST_COMMAND} --test-dir "${example}/build"
  --output-on-failure)

# A condition module links the SDK proper and nothing the host or the data helpers bring.
run_step("reading the plugin's dependencies" readelf -d "${example}/build/libwscsl_gated_explainer.so")
foreach(unwanted opencv boost wscsl_loader wscsl_data wscsl_plot)
  if(step_output MATCHES "NEEDED[^\n]*${unwanted}")
    message(FATAL_ERROR "the out-of-tree condition module needs ${unwanted}:\n${step_output}")
  endif()
endforeach()
if(NOT step_output MATCHES "NEEDED[^\n]*libwscsl_sdk")
  message(FATAL_ERROR "the out-of-tree plugin does not link libwscsl_sdk:\n${step_output}")
endif()

# The template's README holds the options table `describe --markdown` prints.
run_step("describing the out-of-tree plugin" "${prefix}/bin/wscsl" --plugin-path "${example}/build"
  describe condition_module/gated_explainer --markdown)
file(READ "${example}/README.md" readme)
string(FIND "${readme}" "${step_output}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "examples/out_of_tree_plugin/README.md lacks the options table "
                      "`wscsl describe condition_module/gated_explainer --markdown` prints:\n"
                      "${step_output}")
endif()

function(expect_output description)
  foreach(expected ${ARGN})
    string(FIND "${step_output}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${description} did not print '${expected}':\n${step_output}")
    endif()
  endforeach()
endfunction()

# A pipeline of the user's own, beside the plugin, names it by a relative path; the run stops
# after two steps (a checkpoint to evaluate and resume).
set(pipelines "${WORK_DIR}/pipelines")
file(READ "${example}/pipeline.toml" pipeline)
string(REPLACE "paths = [\"build\"]" "paths = [\"../example/build\"]" pipeline "${pipeline}")
file(WRITE "${pipelines}/pipeline.toml" "${pipeline}")
set(tiny --set dataset.train_items=256 --set dataset.val_items=96 --set dataset.test_items=96
  --set dataset.train_triplets=128 --set dataset.val_triplets=64 --set dataset.test_triplets=64
  --set trainer.epochs=1 --set trainer.batch_size=32 --set backbone.width=4)
set(wscsl "${prefix}/bin/wscsl")
run_step("checking the example pipeline" "${wscsl}" check "${example}/pipeline.toml" ${tiny})
expect_output("check" "pipeline is valid" "probed")
execute_process(COMMAND "${wscsl}" train pipeline.toml --run-dir run ${tiny} --stop-after-steps 2
  WORKING_DIRECTORY "${pipelines}" RESULT_VARIABLE status OUTPUT_VARIABLE step_output
  ERROR_VARIABLE step_output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "training with the installed wscsl failed (${status}):\n${step_output}")
endif()

# The pipeline's folder moves (the run with it), and the run is evaluated, exported and resumed
# from another working directory: resolved.toml holds the plugin directory as an absolute path.
file(RENAME "${pipelines}" "${WORK_DIR}/moved")
set(elsewhere "${WORK_DIR}/elsewhere")
file(MAKE_DIRECTORY "${elsewhere}")
function(run_elsewhere description)
  execute_process(COMMAND "${wscsl}" ${ARGN} WORKING_DIRECTORY "${elsewhere}"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${description} failed (${status}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
run_elsewhere("evaluating the moved run" eval ../moved/run)
expect_output("eval" "Alignment accuracy on 'test'" "results written to")
run_elsewhere("exporting the moved run's weights" export-weights ../moved/run --out w.pt --list)
expect_output("export-weights" "condition_module.gates")
run_elsewhere("resuming the moved run" train --resume ../moved/run)
expect_output("train --resume" "resuming" "Alignment accuracy on 'test'" "results written to")

file(READ "${WORK_DIR}/moved/run/resolved.toml" resolved)
foreach(expected "gated_explainer = \"1.0.0 ${example}/build/libwscsl_gated_explainer.so\""
                 "paths = [\"${example}/build\"]")
  string(FIND "${resolved}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "resolved.toml does not hold '${expected}':\n${resolved}")
  endif()
endforeach()
message(STATUS "out-of-tree plugin built against the installed SDK, trained, moved, evaluated "
               "and resumed")
