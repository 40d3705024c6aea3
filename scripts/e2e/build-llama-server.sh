#!/usr/bin/env bash
# Build llama-server for CPU from the llama-cpp-python sdist on the package index (it vendors
# llama.cpp). Only the llama-server target; UI, OpenSSL, tests and tools off; -O1 to cut the
# compile time (a tiny test model does not need -O3). Prints nothing on success but the binary's path.
# ONLY_CONVERT=1 fetches the sdist for llama.cpp's converter alone (when a prebuilt binary is reused).
#
#   scripts/e2e/build-llama-server.sh DEST_DIR     -> DEST_DIR/llama-server, DEST_DIR/convert/ (the
#                                                    vendored convert_hf_to_gguf.py and gguf-py)
# The sdist version is pinned so a cached build stays the build the tests were written against.
set -euo pipefail
DEST="${1:?usage: build-llama-server.sh DEST_DIR}"
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
mkdir -p "${DEST}"
DEST="$(cd "${DEST}" && pwd)"
if [ -x "${DEST}/llama-server" ] && [ -f "${DEST}/convert/convert_hf_to_gguf.py" ]; then
  echo "${DEST}/llama-server"
  exit 0
fi
WORK="${DEST}/build-work"
mkdir -p "${WORK}"
PY="${PYTHON:-python3}"
if [ ! -d "${WORK}/llama_cpp_python-${VERSION}" ]; then
  "${PY}" -m pip download -q --no-deps --no-binary :all: --no-build-isolation \
    "llama-cpp-python==${VERSION}" -d "${WORK}" >&2 ||
    "${PY}" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==${VERSION}" -d "${WORK}" >&2
  tar -xzf "${WORK}/llama_cpp_python-${VERSION}.tar.gz" -C "${WORK}"
fi
SRC="${WORK}/llama_cpp_python-${VERSION}/vendor/llama.cpp"
copy_convert() {
  rm -rf "${DEST}/convert"
  mkdir -p "${DEST}/convert"
  cp "${SRC}/convert_hf_to_gguf.py" "${DEST}/convert/"
  cp -r "${SRC}/gguf-py" "${DEST}/convert/gguf-py"
  if [ -d "${SRC}/conversion" ]; then cp -r "${SRC}/conversion" "${DEST}/convert/conversion"; fi
}
if [ "${ONLY_CONVERT:-0}" = 1 ]; then  # a prebuilt binary is given: only llama.cpp's converter is wanted
  copy_convert
  exit 0
fi
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S "${SRC}" -B "${WORK}/build" "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DGGML_OPENMP=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_ALL_WARNINGS=OFF >&2
cmake --build "${WORK}/build" --target llama-server -j "${JOBS:-2}" >&2
cp "${WORK}/build/bin/llama-server" "${DEST}/llama-server.tmp"
strip "${DEST}/llama-server.tmp" 2>/dev/null || true
copy_convert
mv "${DEST}/llama-server.tmp" "${DEST}/llama-server"
rm -rf "${WORK}/build"
echo "${DEST}/llama-server"
