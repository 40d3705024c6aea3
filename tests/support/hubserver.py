"""A local HTTP server speaking the part of the Hugging Face Hub API that huggingface_hub uses to read
a repo: model info with file sizes, file HEAD/GET (with ranges), and the Hub's error headers.

It serves the real files copied under tests/data/hub/ORG/NAME/ (see data/PROVENANCE.md). A repo's
`model_files.json` (when present) lists the weight shards with their real sizes; they are listed, never
served. Gated and missing repos answer like the Hub does (401 GatedRepo, 404 RepoNotFound).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

HUB_DATA = Path(__file__).resolve().parents[1] / "data" / "hub"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
SERVED = {"config.json", "hf_quant_config.json", "model.safetensors.index.json", "README.md"}


def served(name: str) -> bool:
    # weight files exist only in repos a test writes (header-only or sparse); the real repos list theirs
    return name in SERVED or name.endswith((".safetensors", ".gguf"))


class Hub:
    def __init__(self, root: Path, gated: set[str], mirrors: dict[str, str]) -> None:
        self.root = root
        self.gated = gated
        self.mirrors = mirrors  # repo id -> the folder whose real files it serves (a re-upload, a mirror)
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Authorization header

    def repo_dir(self, repo: str) -> Path | None:
        path = self.root / self.mirrors.get(repo, repo)
        return path if path.is_dir() else None

    def files(self, repo: str) -> list[dict[str, Any]]:
        folder = self.root / self.mirrors.get(repo, repo)
        out = [{"rfilename": p.name, "size": p.stat().st_size} for p in sorted(folder.iterdir()) if served(p.name)]
        listing = folder / "model_files.json"
        if listing.is_file():
            for item in json.loads(listing.read_text())["model_files"]:
                out.append({"rfilename": item["name"], "size": item["size"]})
        return out

    def card(self, repo: str) -> dict[str, Any] | None:
        readme = self.root / self.mirrors.get(repo, repo) / "README.md"
        if not readme.is_file():
            return None
        text = readme.read_text()
        end = text.find("\n---", 3)
        data = yaml.safe_load(text[3:end]) if text.startswith("---") and end > 0 else None
        return data if isinstance(data, dict) else None


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _error(self, status: int, code: str, message: str) -> None:
            body = json.dumps({"error": message}).encode()
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("X-Error-Message", message)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _check(self, repo: str, revision: str) -> bool:
            if repo in hub.gated:
                self._error(401, "GatedRepo", f"Access to model {repo} is restricted. You must be authenticated.")
                return False
            if hub.repo_dir(repo) is None:
                self._error(404, "RepoNotFound", "Repository not found")
                return False
            if revision not in ("main", COMMIT):
                self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                return False
            return True

        def _route(self) -> None:
            hub.requests.append((self.command, self.path, self.headers.get("Authorization")))
            path = self.path.split("?", 1)[0]
            info = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
            if info:
                repo, revision = info.group(1), info.group(2) or "main"
                if not self._check(repo, revision):
                    return
                body = json.dumps(
                    {
                        "id": repo,
                        "modelId": repo,
                        "sha": COMMIT,
                        "private": False,
                        "gated": False,
                        "disabled": False,
                        "tags": [],
                        "siblings": hub.files(repo),
                        "cardData": hub.card(repo),
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            resolve = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if not resolve:
                self._error(404, "EntryNotFound", "unknown route")
                return
            repo, revision, name = resolve.groups()
            if not self._check(repo, revision):
                return
            file = hub.root / hub.mirrors.get(repo, repo) / name
            if not served(name) or not file.is_file():
                self._error(404, "EntryNotFound", f"{name} does not exist on {revision}")
                return
            data = file.read_bytes()
            self.send_response(200)
            self.send_header("ETag", '"' + hashlib.sha256(data).hexdigest() + '"')
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(data)

        do_GET = _route
        do_HEAD = _route

    return Handler


@contextmanager
def serve(
    gated: set[str] | None = None, mirrors: dict[str, str] | None = None, root: Path = HUB_DATA
) -> Iterator[tuple[str, Hub]]:
    hub = Hub(root, gated or set(), mirrors or {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hub
    finally:
        server.shutdown()
        server.server_close()
