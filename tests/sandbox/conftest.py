from __future__ import annotations


def assert_error(response: object, status: int, name: str) -> dict[str, object]:
    """The response is the spec's error body with this status and error name."""
    import httpx

    assert isinstance(response, httpx.Response)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["name"] == name, body
    assert isinstance(body["id"], str) and body["id"]
    assert isinstance(body["message"], str) and body["message"]
    return body  # type: ignore[no-any-return]
