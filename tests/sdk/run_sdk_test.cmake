# Proves that a plugin ships without rebuilding wscsl: install the SDK, build the out-of-tree
# example against the *installed* package, run its tests, and train a pipeline with it using the
# *installed* wscsl.  Arguments: BUILD_DIR, SOURCE_DIR, WORK_DIR.
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

find_program(ccache ccache)
set(launcher "")
if(ccache)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${ccache}")
endif()
run_step("configuring the out-of-tree plugin" ${CMAKE_COMMAND}
  -S "${SOURCE_DIR}/examples/out_of_tree_plugin" -B "${WORK_DIR}/build"
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${launcher})
run_step("building the out-of-tree plugin" ${CMAKE_COMMAND} --build "${WORK_DIR}/build" -j2)
run_step("testing the out-of-tree plugin" ${CMAKE_CTEST_COMMAND} --test-dir "${WORK_DIR}/build"
  --output-on-failure)

# A condition module links the SDK proper and nothing the host or the data helpers bring.
run_step("reading the plugin's dependencies" readelf -d "${WORK_DIR}/build/libwscsl_gated_explainer.so")
foreach(unwanted opencv boost wscsl_loader wscsl_data wscsl_plot)
  if(step_output MATCHES "NEEDED[^\n]*${unwanted}")
    message(FATAL_ERROR "the out-of-tree condition module needs ${unwanted}:\n${step_output}")
  endif()
endforeach()
if(NOT step_output MATCHES "NEEDED[^\n]*libwscsl_sdk")
  message(FATAL_ERROR "the out-of-tree plugin does not link libwscsl_sdk:\n${step_output}")
endif()

run_step("training with the installed wscsl" ${CMAKE_COMMAND} -E env
  "WSCSL_PLUGIN_PATH=${WORK_DIR}/build"
  "${prefix}/bin/wscsl" train "${SOURCE_DIR}/examples/out_of_tree_plugin/pipeline.toml"
  --run-dir "${WORK_DIR}/run"
  --set dataset.train_items=256 --set dataset.val_items=96 --set dataset.test_items=96
  --set dataset.train_triplets=128 --set dataset.val_triplets=64 --set dataset.test_triplets=64
  --set trainer.epochs=1 --set trainer.batch_size=32 --set backbone.width=4)
foreach(expected "Alignment accuracy on 'test'" "results written to")
  string(FIND "${step_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the run did not print '${expected}':\n${step_output}")
  endif()
endforeach()
file(READ "${WORK_DIR}/run/resolved.toml" resolved)
string(FIND "${resolved}" "gated_explainer = \"1.0.0 ${WORK_DIR}/build/libwscsl_gated_explainer.so\"" at)
if(at EQUAL -1)
  message(FATAL_ERROR "resolved.toml does not record the third-party plugin:\n${resolved}")
endif()
message(STATUS "out-of-tree plugin built against the installed SDK and trained")
