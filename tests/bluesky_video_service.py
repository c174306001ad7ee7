"""Bluesky's video service (video.bsky.app) on 127.0.0.1, beside the reference PDS (tests/pds): the
three methods of its lexicons (``app.bsky.video.getUploadLimits``, ``uploadVideo``,
``getJobStatus``), checking what the real one checks, and storing the processed video in the
account's PDS as the real one does, with the account's own service token, which the PDS checks::

    with VideoService(pds) as service:
        service.url          # what BLUESKY_VIDEO_SERVICE names
        service.uploads      # each uploadVideo it took: (did, name, bytes)

Every service token is verified as the real service verifies it: an ES256K JWT signed by the key
the account's DID document names (read from the dev-env's PLC directory), not expired, for the
method asked (``lxm``): getUploadLimits' for this service's did:web, uploadVideo's for the PDS's own
DID (``uploadBlob``, which the PDS then checks itself). An upload must be an MP4 (ffprobe reads
it), named and for the token's account. Its job is "processed" for `polls` questions of
getJobStatus (JOB_STATE_ENCODING, with progress), then stored in the PDS (``uploadBlob`` with the
account's token) and completed with its blob; the same bytes uploaded again answer at once with
the first job's blob and ``already_exists``, as Bluesky's docs say. `limits` is what
getUploadLimits answers; `fail_processing` makes every job fail, `never_done` never end.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

from loopback import LoopbackServer

ENCODING, COMPLETED, FAILED = "JOB_STATE_ENCODING", "JOB_STATE_COMPLETED", "JOB_STATE_FAILED"
MOST_TOKEN_SECONDS = 60 * 60  # the real service refuses a token that lives longer (an hour)


@dataclass
class Job:
    job_id: str
    did: str
    digest: str
    state: str = ENCODING
    polls_left: int = 0
    blob: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    message: Optional[str] = None
    token: str = field(default="", repr=False)  # the account's service token, which stores the video
    data: bytes = field(default=b"", repr=False)

    def status(self) -> Dict[str, Any]:
        answer: Dict[str, Any] = {"jobId": self.job_id, "did": self.did, "state": self.state}
        if self.state == ENCODING:
            answer["progress"] = 50
        for name in ("blob", "error", "message"):
            if getattr(self, name) is not None:
                answer[name] = getattr(self, name)
        return answer


@dataclass
class VideoService:
    """The service, for the PDS at `pds_url` whose accounts live in the PLC at `plc_url`."""

    pds_url: str
    plc_url: str
    polls: int = 2
    limits: Dict[str, Any] = field(
        default_factory=lambda: {"canUpload": True, "remainingDailyVideos": 25, "remainingDailyBytes": 10_000_000_000}
    )
    fail_processing: bool = False
    never_done: bool = False
    uploads: List[Tuple[str, str, bytes]] = field(default_factory=list)
    asked_limits: int = 0
    refused: List[str] = field(default_factory=list)  # why each refused request was refused
    _jobs: Dict[str, Job] = field(default_factory=dict)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> VideoService:
        from atproto_identity.resolver import IdResolver

        self._resolver = IdResolver(plc_url=self.plc_url, timeout=10)
        with urllib.request.urlopen(f"{self.pds_url}/xrpc/com.atproto.server.describeServer", timeout=10) as reply:
            self.pds_did = json.loads(reply.read())["did"]
        self._server = LoopbackServer(_handler(self)).start()
        host, port = self._server.server_address[:2]
        # The PDS takes a did:web of a name, not of an address: the service is "localhost" to all.
        self.url, self.did = f"http://localhost:{port}", f"did:web:localhost%3A{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    # -- what the real service checks ----------------------------------------------------------------

    def verified(self, header: str, audience: str, method: str) -> Dict[str, Any]:
        """The service token's payload, or ValueError naming why the real service would refuse it."""
        from atproto_server.auth.jwt import verify_jwt

        if not header.startswith("Bearer "):
            raise ValueError("AuthMissing: no Bearer token")
        token = header[len("Bearer ") :]
        try:
            payload = verify_jwt(token, self._resolver.did.resolve_atproto_key, own_did=audience)
        except Exception as exc:  # the library's own errors: expired, wrong audience, bad signature
            raise ValueError(f"InvalidToken: {type(exc).__name__}: {exc}") from None
        if payload.lxm != method:
            raise ValueError(f"InvalidToken: the token is for {payload.lxm}, not {method}")
        if payload.exp is None or payload.iat is None or payload.exp - payload.iat > MOST_TOKEN_SECONDS:
            raise ValueError("InvalidToken: the token lives longer than an hour")
        return {"iss": payload.iss, "token": token}

    def upload(self, did: str, name: str, data: bytes, token: str) -> Job:
        """An uploadVideo taken: its job (a known video's at once, "already_exists")."""
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            self.uploads.append((did, name, data))
            for job in self._jobs.values():
                if job.digest == digest and job.did == did and job.blob is not None:
                    return Job(job.job_id, did, digest, FAILED, blob=job.blob, error="already_exists",
                               message="Video already processed")  # fmt: skip
            job = Job(f"job-{next(self._ids)}", did, digest, polls_left=self.polls, token=token, data=data)
            self._jobs[job.job_id] = job
            return job

    def poll(self, job_id: str) -> Optional[Job]:
        """getJobStatus: a job moves on one step each time it is asked."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state != ENCODING or self.never_done:
                return job
            job.polls_left -= 1
            if job.polls_left > 0:
                return job
            if self.fail_processing:
                job.state, job.error, job.message = FAILED, "invalid_video", "the video could not be encoded"
                return job
        job.blob = self._store(job)
        job.state = COMPLETED
        return job

    def _store(self, job: Job) -> Dict[str, Any]:
        """The processed video stored in the account's PDS with the account's token (the PDS checks it)."""
        request = urllib.request.Request(
            f"{self.pds_url}/xrpc/com.atproto.repo.uploadBlob",
            data=job.data,
            headers={"Authorization": f"Bearer {job.token}", "Content-Type": "video/mp4"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.loads(reply.read())["blob"]


def _is_mp4(data: bytes) -> bool:
    """Whether ffprobe reads `data` as an MP4 with a video stream (the service takes nothing else)."""
    done = subprocess.run(
        ["ffprobe", "-v", "error", "-f", "mp4", "-show_streams", "-of", "json", "-i", "pipe:0"],
        input=data,
        capture_output=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        return False
    return any(stream.get("codec_type") == "video" for stream in json.loads(done.stdout or b"{}").get("streams", []))


def _handler(service: VideoService) -> type:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self, status: int, body: Dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, status: int, why: str) -> None:
            service.refused.append(why)
            error, _, message = why.partition(": ")
            self._answer(status, {"error": error, "message": message or error})

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            if parts.path == "/xrpc/app.bsky.video.getUploadLimits":
                try:
                    service.verified(
                        self.headers.get("Authorization", ""), service.did, "app.bsky.video.getUploadLimits"
                    )
                except ValueError as exc:
                    return self._refuse(401, str(exc))
                service.asked_limits += 1
                return self._answer(200, service.limits)
            if parts.path == "/xrpc/app.bsky.video.getJobStatus":
                job = service.poll(query.get("jobId", ""))
                if job is None:
                    return self._refuse(400, "InvalidRequest: no such job")
                return self._answer(200, {"jobStatus": job.status()})
            self._refuse(404, "MethodNotImplemented: no such method")

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if parts.path != "/xrpc/app.bsky.video.uploadVideo":
                return self._refuse(404, "MethodNotImplemented: no such method")
            try:
                claims = service.verified(
                    self.headers.get("Authorization", ""), service.pds_did, "com.atproto.repo.uploadBlob"
                )
            except ValueError as exc:
                return self._refuse(401, str(exc))
            if query.get("did") != claims["iss"] or not query.get("name"):
                return self._refuse(400, "InvalidRequest: did must be the token's account, and name is required")
            if self.headers.get("Content-Type") != "video/mp4" or not _is_mp4(data):
                return self._refuse(400, "InvalidRequest: not an MP4 video")
            job = service.upload(query["did"], query["name"], data, claims["token"])
            self._answer(200, {"jobStatus": job.status()})

    return Handler
