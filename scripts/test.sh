#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian/Ubuntu machine, then run it:
# lint (ruff), types (mypy --strict), example drift, and pytest (shellcheck, the Compose schema,
# the engines' flag vocabularies and a real Docker engine are all exercised).
#
# What it installs and starts:
#   - apt (with sudo unless root), only when missing: shellcheck, busybox-static, docker.io;
#   - pip: recipegen in editable mode with its dev extras, into the active virtual environment,
#     else into ./.venv (created here if missing; a system Python is never touched);
#   - a Docker daemon, only if none answers; it is stopped again when this script exits.
# Nothing outside the repository is read: the test data lives in tests/data/.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v shellcheck >/dev/null || missing+=(shellcheck)
command -v busybox >/dev/null || missing+=(busybox-static)
command -v dockerd >/dev/null || missing+=(docker.io)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test.sh: installing with apt: ${missing[*]}"
  ${SUDO} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq "${missing[@]}" >/dev/null
fi

DOCKERD_PID=""
stop_dockerd() {
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
"${PY}" -m pytest "$@"
