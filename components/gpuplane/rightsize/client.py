"""A minimal client of the Prometheus HTTP API (`/api/v1/query`), on the standard library alone.

Queries go as form-encoded POSTs (the API takes both; long queries stay out of the URL). Every failure is one
`InputError` naming `--prometheus`: an address that is not an http(s) URL or that carries credentials (never
echoed: `redact`), a server that does not answer within the timeout or refuses the connection, an answer that
is not the API's JSON, a non-2xx status, or `"status": "error"` (the query's own error, as Prometheus words it).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

ARGUMENT = "--prometheus"

Sample = tuple[dict[str, str], float]
"""One element of an instant vector: its labels and value."""


def redact(url: str) -> str:
    """`url` with any `user:password@` before its host replaced by `***@`, for messages."""
    return re.sub(r"^([^:/?#]*://)[^/?#]*@", r"\1***@", url)


def check_url(url: str) -> str:
    """`url` without a trailing slash, or an InputError when it is not an http(s) URL with a host, or when it
    carries credentials (the client sends none, and a message or the JSON report would echo them)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        parts = urllib.parse.urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise InputError(
            f"{redact(url)!r} is not the http:// or https:// address of a Prometheus (e.g. http://localhost:9090)",
            ARGUMENT,
        )
    if "@" in parts.netloc:
        raise InputError(
            f"{redact(url)!r} carries credentials, which gpuplane does not send: reach the server through a "
            "port-forward or a proxy that authenticates",
            ARGUMENT,
        )
    return url.rstrip("/")


@dataclass(frozen=True)
class Prometheus:
    """A Prometheus (or anything serving its HTTP API: Thanos, Mimir, GKE's frontend) at `url`."""

    url: str
    timeout: float = 30.0

    def query(self, promql: str, at: float) -> list[Sample]:
        """The instant vector `promql` evaluates to at unix time `at`."""
        data = self._post("/api/v1/query", {"query": promql, "time": f"{at:.3f}"})
        if data.get("resultType") != "vector":
            raise InputError(f"{self.url} answered a {data.get('resultType')!r}, not a vector, to {promql}", ARGUMENT)
        out = []
        for item in data.get("result", []):
            value = float(item["value"][1])
            if value == value:  # NaN: no answer for this series
                out.append((dict(item["metric"]), value))
        return out

    def _post(self, path: str, form: dict[str, str]) -> dict[str, Any]:
        body = urllib.parse.urlencode(form).encode()
        request = urllib.request.Request(
            self.url + path,
            data=body,
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:  # noqa: S310 - the user's URL
                text = resp.read()
        except urllib.error.HTTPError as exc:
            raise InputError(f"{self.url} answered HTTP {exc.code}{_api_error(exc.read())}", ARGUMENT) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise InputError(f"{self.url} did not answer within {self.timeout:g}s", ARGUMENT) from None
            raise InputError(f"cannot reach Prometheus at {self.url}: {reason}", ARGUMENT) from None
        try:
            doc = json.loads(text)
        except ValueError:
            raise InputError(
                f"{self.url}{path} is not the Prometheus HTTP API (its answer is not JSON)", ARGUMENT
            ) from None
        if not isinstance(doc, dict) or doc.get("status") != "success":
            raise InputError(f"{self.url} refused a query{_api_error(text)}", ARGUMENT)
        return dict(doc.get("data") or {})


def _api_error(body: bytes) -> str:
    """`: <errorType>: <error>` from an API error body, or empty."""
    try:
        doc = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(doc, dict) or "error" not in doc:
        return ""
    return f": {doc.get('errorType', 'error')}: {doc['error']}"


__all__ = ["Prometheus", "Sample", "check_url", "redact"]
