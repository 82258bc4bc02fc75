"""Run a real `flagdesk serve` in a child process on a free loopback port: for the GUI's embedded
sandbox, tests and benchmarks. Tokens travel in the environment, never in argv."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx


class SandboxProcess:
    def __init__(self, db: Path, *args: str, admin_token: str | None = None,
                 client_token: str | None = None) -> None:  # fmt: skip
        self.db = Path(db)
        self.args = list(args)
        self.admin_token = admin_token or "*:*." + secrets.token_hex(16)
        self.client_token = client_token or "default:development." + secrets.token_hex(16)
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: list[str] = []

    def start(self, timeout: float = 30.0) -> SandboxProcess:
        env = dict(os.environ)
        env["FLAGDESK_SANDBOX_ADMIN_TOKEN"] = self.admin_token
        env["FLAGDESK_SANDBOX_CLIENT_TOKEN"] = self.client_token
        env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", "0", "--db", str(self.db),
             *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("sandbox exited early:\n" + "".join(self.output))
            self.output.append(line)
            if "listening on " in line:
                self.url = line.rsplit(" ", 1)[1].strip()
                break
        else:
            raise RuntimeError("sandbox did not start:\n" + "".join(self.output))
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("sandbox never became healthy")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, as in a crash."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def admin(self) -> httpx.Client:
        """A synchronous HTTP client authorised with the admin token."""
        return httpx.Client(base_url=self.url, headers={"Authorization": self.admin_token},
                            timeout=30)  # fmt: skip

    def client(self) -> httpx.Client:
        """A synchronous HTTP client authorised with the client token."""
        return httpx.Client(base_url=self.url, headers={"Authorization": self.client_token},
                            timeout=30)  # fmt: skip

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
