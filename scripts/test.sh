#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian/Ubuntu machine, then run it:
# lint (ruff), types (mypy --strict), example drift, and pytest (shellcheck, the Compose schema,
# the engines' flag vocabularies and a real Docker engine are all exercised).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v shellcheck >/dev/null || missing+=(shellcheck)
command -v busybox >/dev/null || missing+=(busybox-static)
command -v dockerd >/dev/null || missing+=(docker.io)
if [ "${#missing[@]}" -gt 0 ]; then
  ${SUDO} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  ${SUDO} sh -c 'nohup dockerd >/tmp/recipegen-dockerd.log 2>&1 &'
  for _ in $(seq 1 30); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
fi

python3 -m pip install -q --disable-pip-version-check -e '.[dev]'
python3 -m ruff check generator tests scripts
python3 -m mypy
python3 scripts/examples.py --check
python3 -m pytest "$@"
