# shellcheck shell=bash
# Phase 1: the versions, the GPU, the dependency prefix and Fashion-MNIST.
# Sourced by scripts/gpu_run.sh after the phases numbered before it.
begin environment "versions, GPU, the dependency prefix, Fashion-MNIST"
env_status=ok env_note=""
[ -n "$commit" ] || commit=$(git -C "$checkout" rev-parse --short HEAD 2>/dev/null || echo "")
if [ -z "$python" ]; then
  python=$(sed -n 's/^WSCSL_PYTHON:FILEPATH=//p' "$build/CMakeCache.txt" 2>/dev/null)
  [ -n "$python" ] || python=python3
fi
{
  echo "commit: ${commit:-unknown}"
  echo "user: $(id -un 2>/dev/null) (uid $(id -u))"
  echo "host: $(uname -n); cores: $(nproc); $(free -g | awk '/^Mem:/ { print "memory: " $2 " GiB" }')"
  # shellcheck disable=SC1091
  (. /etc/os-release 2>/dev/null && echo "system: $PRETTY_NAME; $(ldd --version 2>/dev/null | head -n 1)")
  echo "g++: $(g++ --version 2>/dev/null | head -n 1)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1); ninja: $(ninja --version 2>/dev/null || echo none)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 1 || echo none)"
  echo "python: $python"
  timeout 60 "$python" - <<'PY' 2>&1
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
      torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
      "cxx11 abi", torch.compiled_with_cxx11_abi())
print("cuda available", torch.cuda.is_available(), "devices", torch.cuda.device_count())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print("gpu0", p.name, round(p.total_memory / 2**30, 1), "GiB", "sm", f"{p.major}.{p.minor}")
try:
    import torchvision
    print("torchvision", torchvision.__version__)
except Exception as e:
    print("torchvision: none", e)
try:
    import nvidia.nccl, os
    print("nccl wheel", os.path.dirname(nvidia.nccl.__file__))
except Exception:
    print("nccl wheel: none")
try:
    import tensorboard
    print("tensorboard", tensorboard.__version__)
except Exception:
    print("tensorboard: none")
PY
  echo "nvidia-smi:"
  timeout 30 nvidia-smi 2>&1 || echo "(no nvidia-smi)"
} >"$logs/environment.log" 2>&1
torch_line=$(grep -m1 '^torch ' "$logs/environment.log" | sed 's/^torch //')
gpu_name=$(grep -m1 '^gpu0 ' "$logs/environment.log" | sed 's/^gpu0 //')
if [ "$device" = cuda ]; then
  if grep -q '^cuda available True' "$logs/environment.log"; then
    check PASS "python3's PyTorch sees a GPU" "$gpu_name"
  else
    check FAIL "python3's PyTorch sees a GPU" "$(grep -m1 '^cuda available' "$logs/environment.log")"
    env_status="failed"
  fi
else
  check N/A "python3's PyTorch sees a GPU" "--device cpu: $(grep -m1 '^cuda available' "$logs/environment.log" || echo 'no torch')"
fi
if [ -n "$deps_archive" ]; then
  mkdir -p "$work/deps"
  # tar needs xz for .tar.xz; Python's tarfile reads it without.
  if run_logged environment.log 120 tar -xJf "$deps_archive" -C "$work/deps" ||
    run_logged environment.log 120 "$python" -c \
      'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$deps_archive" "$work/deps"; then
    deps_dir=$(dirname "$(find "$work/deps" -maxdepth 2 -name .wscsl-deps-stamp | head -n 1)")
    env_note="prefix $(du -sh "$deps_dir" | cut -f1) unpacked from $deps_archive"
  else
    env_status="failed" env_note="cannot unpack $deps_archive"
  fi
fi
if [ -n "$deps_dir" ]; then
  expect "the dependency prefix is one" test -f "$deps_dir/.wscsl-deps-stamp"
  head -n 40 "$deps_dir/MANIFEST" >>"$logs/environment.log" 2>/dev/null
fi
fm=/usr/share/datasets/fashion-mnist
if [ ! -f "$fm/train-images-idx3-ubyte.gz" ] && [ -d "$fashion_src" ]; then
  mkdir -p "$fm" && cp "$fashion_src"/*.gz "$fm"/ 2>>"$logs/environment.log" &&
    echo "Fashion-MNIST copied from $fashion_src to $fm" >>"$logs/environment.log"
fi
if [ -f "$fm/train-images-idx3-ubyte.gz" ] && [ -f "$fm/t10k-images-idx3-ubyte.gz" ]; then
  check PASS "Fashion-MNIST is in $fm" "$(du -sh "$fm" | cut -f1)"
else
  check FAIL "Fashion-MNIST is in $fm" "carry it (deps/fashion-mnist) or install dataset-fashion-mnist"
  env_status="failed"
fi
end "$env_status" "$env_note"
