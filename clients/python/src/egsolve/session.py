"""The HTTP side of :class:`~egsolve.Client`: requests to its server, retried where that is
safe, and error answers raised as :class:`~egsolve.ApiError`.

:class:`Session` is the base of the client's classes (:class:`~egsolve.parts.PartsMixin`,
then :class:`~egsolve.Client`, whose ``__init__`` sets its attributes), so every method
that talks to the server shares one definition of these requests.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Any, Dict, Literal, Optional, Union

import httpx

from .errors import ApiError, ConnectionFailed, api_error
from .upload import Body

__all__ = ["RETRY_STATUSES", "UNSENT", "Session", "error_of"]

RETRY_STATUSES = (502, 503, 504)
#: Transport errors that say the request never left: safe to send again even when the
#: request is not idempotent.
UNSENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def error_of(response: httpx.Response) -> ApiError:
    """The :class:`~egsolve.ApiError` of an error answer (its problem document, else its
    status line and the start of its text), with the answer's ``Retry-After`` seconds."""
    try:
        problem = response.json()
        if not isinstance(problem, dict):
            raise ValueError
    except ValueError:
        problem = {"title": response.reason_phrase, "detail": response.text[:500]}
    retry_after = response.headers.get("Retry-After")
    seconds = float(retry_after) if retry_after and retry_after.isdigit() else None
    return api_error(response.status_code, problem, seconds)


class Session:
    """Requests to one server: the connection pool ``_http`` (its base URL ``url``), each
    read bounded by ``timeout`` seconds, and ``retries`` retries in a row after ``backoff``
    seconds, doubled each time (see :mod:`egsolve.client` for which requests are retried)."""

    url: str
    timeout: float
    retries: int
    backoff: float
    _http: httpx.Client

    def _delay(self, attempt: int) -> float:
        return min(10.0, self.backoff * 2.0 ** (attempt - 1)) * (0.5 + random.random())

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Dict[str, Any]] = None,
        body: Optional[Body] = None,
        headers: Optional[Dict[str, str]] = None,
        read_timeout: Optional[float] = None,
        retry: Union[bool, Literal["unsent"]] = True,
    ) -> httpx.Response:
        """Sends a request; raises the problem of an error answer as an :class:`ApiError`.
        ``retry``: ``True`` sends it again after a network failure or a 502/503/504,
        ``"unsent"`` only when the request never left (no connection could be made)."""
        timeout = httpx.Timeout(self.timeout, read=read_timeout or self.timeout)
        failures = 0
        while True:
            try:
                response = self._http.request(
                    method,
                    path,
                    params=params,
                    content=body.chunks() if body else None,
                    headers={**(body.headers if body else {}), **(headers or {})},
                    timeout=timeout,
                )
            except httpx.TransportError as e:
                failures += 1
                if not retry or failures > self.retries or (retry == "unsent" and not isinstance(e, UNSENT)):
                    raise ConnectionFailed(f"cannot reach {self.url}: {e!r}") from e
                time.sleep(self._delay(failures))
                continue
            if response.status_code < 400:
                return response
            error = error_of(response)
            again = response.status_code in RETRY_STATUSES or error.kind == "idempotency-key-in-use"
            if retry is True and again and failures < self.retries:
                failures += 1
                time.sleep(error.retry_after if error.retry_after else self._delay(failures))
                continue
            raise error

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._request(method, path, **kwargs).json()

    def _submission(
        self, path: str, params: Dict[str, Any], body: Body, idempotency_key: Optional[str]
    ) -> Any:
        """``POST`` of a submission (a job or a batch) and its answer's JSON: it carries an
        ``Idempotency-Key`` (``idempotency_key``, or a fresh one), so it is sent again like
        any safe request and a lost answer never makes a second job."""
        key = idempotency_key or uuid.uuid4().hex
        return self._json("POST", path, params=params, body=body, headers={"Idempotency-Key": key})
