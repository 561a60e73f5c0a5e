#!/usr/bin/env bash
# Install llama-cpp-python (the `llamacpp` extra) from a wheel built once and kept on this machine.
# The sdist compiles llama.cpp (about 16 min on 2 cores); the wheel is cached under
# ${MEMVIZ_WHEEL_CACHE:-~/.cache/memviz-wheels}/<variant>/ and reused while its version matches.
# Variant "portable" (default): x86-64 with AVX2, no -march=native, so the build runs on any AVX2 CPU
# (a native build on a CPU with AMX crashed in llama_decode on this project's VMs).
# Variant "cuda": CMAKE_ARGS=-DGGML_CUDA=on, on a machine with nvcc.
# Usage: scripts/llamacpp-wheel.sh [portable|cuda]   (uses the active Python's pip)
set -euo pipefail
VERSION=0.3.36
VARIANT=${1:-portable}
CACHE=${MEMVIZ_WHEEL_CACHE:-$HOME/.cache/memviz-wheels}/$VARIANT
case "$VARIANT" in
  portable) FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" ;;
  cuda) FLAGS="-DGGML_CUDA=on" ;;
  *) echo "unknown variant $VARIANT (portable or cuda)" >&2; exit 2 ;;
esac
mkdir -p "$CACHE"
wheel=$(ls "$CACHE"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  echo "building llama-cpp-python $VERSION ($VARIANT) once; the wheel is kept in $CACHE" >&2
  CMAKE_ARGS="$FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) python -m pip wheel --quiet --no-deps \
    --no-binary llama-cpp-python "llama-cpp-python==$VERSION" -w "$CACHE"
  wheel=$(ls "$CACHE"/llama_cpp_python-"$VERSION"-*.whl | head -1)
fi
python -m pip install --quiet "$wheel"
