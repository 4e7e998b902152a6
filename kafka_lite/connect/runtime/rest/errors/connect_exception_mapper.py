"""How every error of the REST API is answered: a status code and ``{"error_code", "message"}``.

Mirrors: org.apache.kafka.connect.runtime.rest.errors.ConnectExceptionMapper
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/errors/ConnectExceptionMapper.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: FastAPI's own errors (a body that is not JSON or not the expected shape, an unknown
         path, a wrong method) get the same body, with 400 for a bad body where FastAPI says
         422; Kafka's Jersey answers those with its own pages.

A ``ConnectRestException`` carries its status; ``NotFoundException`` is 404 and
``AlreadyExistsException`` 409; any other ``ConnectException`` is 500, and so is any other
exception (a bug, or ``NotImplementedError``: a call this herder does not support).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from kafka_lite.connect.errors import AlreadyExistsException, ConnectException, NotFoundException
from kafka_lite.connect.runtime.rest.entities import ErrorMessage
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import ConnectRestException

log = logging.getLogger(__name__)


def error_response(status: int, message: str, error_code: int | None = None) -> JSONResponse:
    body = ErrorMessage(status if error_code is None else error_code, message).to_json()
    return JSONResponse(body, status_code=status)


def to_response(request: Request, exception: ConnectException) -> JSONResponse:
    log.debug("Uncaught exception in REST call to %s", request.url.path, exc_info=exception)
    if isinstance(exception, ConnectRestException):
        return error_response(exception.status_code, str(exception), exception.error_code)
    if isinstance(exception, NotFoundException):
        return error_response(404, str(exception))
    if isinstance(exception, AlreadyExistsException):
        return error_response(409, str(exception))
    return error_response(500, str(exception))


def bad_request_body(request: Request, exception: RequestValidationError) -> JSONResponse:
    problems = []
    for error in exception.errors():
        if error.get("type") == "json_invalid":
            problems.append(
                f"the body is not valid JSON ({error.get('ctx', {}).get('error', 'cannot be parsed')})"
            )
            continue
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        problems.append(f"{where or 'body'}: {error.get('msg')}")
    return error_response(400, f"Bad request to {request.url.path}: {'; '.join(problems)}")


def http_error(request: Request, exception: HTTPException) -> JSONResponse:
    return error_response(exception.status_code, str(exception.detail))


def unsupported(request: Request, exception: NotImplementedError) -> JSONResponse:
    return error_response(500, str(exception))


def unexpected_error(request: Request, exception: Exception) -> JSONResponse:
    log.error("Uncaught exception in REST call to %s", request.url.path, exc_info=exception)
    return error_response(500, f"{type(exception).__name__}: {exception}")


def register(app: FastAPI) -> None:
    app.add_exception_handler(ConnectException, to_response)
    app.add_exception_handler(RequestValidationError, bad_request_body)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(NotImplementedError, unsupported)
    # Last: anything else is a bug; the server also logs its stack trace.
    app.add_exception_handler(Exception, unexpected_error)
