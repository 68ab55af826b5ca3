# wscsl_add_c10d(<target> <host_dir>) adds the communicator and its rendezvous
# (<host_dir>/src/distributed/communicator.cpp, rendezvous.cpp) and c10d's NCCL backend (distributed/nccl.cpp, or
# distributed/nccl_absent.cpp where NCCL is not built in) to <target>, with what c10d's headers
# need. Used by the host and by the GPU check (tests/device).
#
# Gloo: c10d's Gloo process group and DDP's Reducer ship in LibTorch; their headers need
# USE_C10D_GLOO and Gloo's own headers (Debian: libgloo-dev; a PyTorch wheel ships none: the
# dependency prefix has those matching LibTorch 1 and 2, or set WSCSL_GLOO_INCLUDE_DIR). Debian's LibTorch leaves out one header that reducer.hpp includes
# (distributed autograd, unused here): <host_dir>/compat declares what it names.
#
# NCCL, for the collectives of CUDA tensors: c10d's NCCL backend ships in a CUDA LibTorch, and its
# header needs USE_C10D_NCCL and NCCL's own header (Debian: libnccl-dev; pip: the nvidia-nccl
# wheel, found through NCCL_ROOT). wscsl reaches it through LibTorch 2's per-device backends, so
# LibTorch 1.13 builds, and CPU builds, have none (nccl_absent.cpp says so).
function(wscsl_add_c10d target host_dir)
  find_path(WSCSL_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS}
    PATHS "${WSCSL_DEPS_PREFIX}/gloo/torch-${Torch_VERSION_MAJOR}")
  if(NOT WSCSL_GLOO_INCLUDE_DIR)
    message(FATAL_ERROR "Gloo's headers (gloo/algorithm.h) were not found: on Debian, install "
                        "libgloo-dev (scripts/setup.sh does); elsewhere build with the dependency "
                        "prefix (scripts/build.sh --deps) or set WSCSL_GLOO_INCLUDE_DIR to the "
                        "folder that holds gloo/")
  endif()
  find_path(WSCSL_TORCH_DIST_AUTOGRAD_DIR torch/csrc/distributed/autograd/context/context.h
    HINTS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)

  wscsl_torch_cuda(torch_is_cuda)
  option(WSCSL_NCCL "Build c10d's NCCL backend in (CUDA LibTorch 2 only)" ${torch_is_cuda})
  set(definitions USE_C10D_GLOO)
  if(WSCSL_NCCL AND torch_is_cuda AND Torch_VERSION VERSION_GREATER_EQUAL 2)
    # Only the header: the backend's code, and NCCL's library with it, come with LibTorch's.
    find_path(WSCSL_NCCL_INCLUDE_DIR nccl.h HINTS $ENV{NCCL_ROOT}/include ${NCCL_ROOT}/include
      ${CUDAToolkit_INCLUDE_DIRS})
    if(NOT WSCSL_NCCL_INCLUDE_DIR)
      message(FATAL_ERROR "this LibTorch has CUDA, and NCCL's header (nccl.h) was not found: on "
                          "Debian, install libnccl-dev; elsewhere set NCCL_ROOT to NCCL's "
                          "folder, or configure with -DWSCSL_NCCL=OFF to reduce CUDA tensors "
                          "through Gloo")
    endif()
    set(sources ${host_dir}/src/distributed/communicator.cpp
      ${host_dir}/src/distributed/rendezvous.cpp ${host_dir}/src/distributed/nccl.cpp)
    list(APPEND definitions USE_C10D_NCCL)
    target_include_directories(${target} SYSTEM PRIVATE ${WSCSL_NCCL_INCLUDE_DIR})
  else()
    set(sources ${host_dir}/src/distributed/communicator.cpp
      ${host_dir}/src/distributed/rendezvous.cpp ${host_dir}/src/distributed/nccl_absent.cpp)
  endif()

  # The torchrun of the PyTorch this LibTorch belongs to, the way out a failed rendezvous names:
  # a wheel's environment's Python, or the system's for a LibTorch under /usr (Debian's).
  if(TORCH_INSTALL_PREFIX MATCHES "^(.*)/lib/python3[.0-9]*/site-packages/torch/?$"
     AND EXISTS "${CMAKE_MATCH_1}/bin/python3")
    set(torchrun "${CMAKE_MATCH_1}/bin/python3 -m torch.distributed.run")
  elseif(TORCH_INSTALL_PREFIX MATCHES "^/usr/?$" AND EXISTS /usr/bin/python3)
    set(torchrun "/usr/bin/python3 -m torch.distributed.run")
  else()
    set(torchrun "")
  endif()
  list(APPEND definitions "WSCSL_TORCHRUN=\"${torchrun}\"")

  target_sources(${target} PRIVATE ${sources})
  target_include_directories(${target} SYSTEM PRIVATE ${WSCSL_GLOO_INCLUDE_DIR})
  set_source_files_properties(${sources} TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_DEFINITIONS "${definitions}" SKIP_PRECOMPILE_HEADERS ON)
  if(NOT WSCSL_TORCH_DIST_AUTOGRAD_DIR)
    set_property(SOURCE ${sources} TARGET_DIRECTORY ${target} APPEND PROPERTY
      INCLUDE_DIRECTORIES ${host_dir}/compat)
  endif()
endfunction()
