"""What `AdminClient` raises. Every message is fit to show a user as it is, and none holds a token.

- `ClientError`: the base; catch it to show "something went wrong talking to the server".
- `ApiError`: the server answered with a non-2xx status (`status`, `name`, `message` come from
  the `{id, name, message}` error body when there is one).
- `ServerUnreachable`: no answer at all (refused, timed out, DNS, TLS).
- `BadResponse`: a 2xx answer whose body does not fit the wire model.
"""

from __future__ import annotations


class ClientError(Exception):
    """Something went wrong talking to a server. `str(error)` is the user-facing text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ApiError(ClientError):
    """A non-2xx response. `name` is the error body's `name` (such as `NotFoundError`), or the
    HTTP reason phrase when the body is not an Unleash error body."""

    def __init__(
        self,
        status: int,
        name: str,
        message: str,
        *,
        method: str = "",
        path: str = "",
        error_id: str | None = None,
    ) -> None:
        self.status = status
        self.name = name
        self.method = method
        self.path = path
        self.error_id = error_id
        where = f" ({method} {path})" if method and path else ""
        text = f"{status} {name}{where}"
        super().__init__(f"{text}: {message}" if message else text)
        # `message` is the server's own sentence; `str(error)` adds status, name and request
        self.message = message

    def __str__(self) -> str:
        return self.args[0] if self.args else ""

    def __repr__(self) -> str:
        return f"ApiError(status={self.status!r}, name={self.name!r}, message={self.message!r})"


class ServerUnreachable(ClientError):
    """No HTTP answer: the connection was refused, timed out or failed."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"Cannot reach {url}: {reason}")


class BadResponse(ClientError):
    """A 2xx answer whose body is not JSON or does not match the wire model."""
