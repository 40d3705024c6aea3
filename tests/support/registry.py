"""A minimal Docker registry (distribution API v2, read-only) over a real local HTTP server, so
that the Docker engine can really pull from it in tests: one image, exported from the engine."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def export(client: Any, image: str) -> tuple[bytes, dict[str, bytes]]:
    """(manifest, blobs by digest) of a local image, from `docker save`."""
    with tarfile.open(fileobj=io.BytesIO(b"".join(client.images.get(image).save()))) as saved:

        def read(name: str) -> bytes:
            member = saved.extractfile(name)
            assert member is not None
            return member.read()

        entry = json.loads(read("manifest.json"))[0]
        config = read(entry["Config"])
        blobs = {_digest(config): config}
        layers = []
        for name in entry["Layers"]:
            gz = gzip.compress(read(name), mtime=0)
            blobs[_digest(gz)] = gz
            layers.append(
                {
                    "mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    "size": len(gz),
                    "digest": _digest(gz),
                }
            )
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {
            "mediaType": "application/vnd.docker.container.image.v1+json",
            "size": len(config),
            "digest": _digest(config),
        },
        "layers": layers,
    }
    return json.dumps(manifest).encode(), blobs


@contextmanager
def registry(repo: str, tag: str, manifest: bytes, blobs: dict[str, bytes]) -> Iterator[int]:
    """Serves repo:tag on 127.0.0.1; yields the port."""

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, code: int, body: bytes, ctype: str, digest: str | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            if digest:
                self.send_header("Docker-Content-Digest", digest)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/v2/":
                return self._reply(200, b"{}", "application/json")
            m = re.fullmatch(r"/v2/(.+)/(manifests|blobs)/([^/]+)", self.path)
            if m and m.group(2) == "manifests" and m.group(1) == repo and m.group(3) in {tag, _digest(manifest)}:
                return self._reply(200, manifest, MANIFEST, _digest(manifest))
            if m and m.group(2) == "blobs" and m.group(3) in blobs:
                return self._reply(200, blobs[m.group(3)], "application/octet-stream", m.group(3))
            body = json.dumps({"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]}).encode()
            return self._reply(404, body, "application/json")

        do_HEAD = do_GET

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
