"""An error the REST API answers with a status code of its own choosing (400, 409, 500 ...).

Mirrors: org.apache.kafka.connect.runtime.rest.errors.ConnectRestException and BadRequestException
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/errors/, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: nothing beyond being Python exceptions.

Most errors reach the REST API as what they are (``NotFoundException`` is 404,
``AlreadyExistsException`` 409, any other ``ConnectException`` 500). Where the status is decided
by the code that notices the problem (a bad request body, a conflicting rebalance, a request
timeout) it raises a ``ConnectRestException`` carrying the status; the error body's
``error_code`` is the same number unless given otherwise.
"""

from __future__ import annotations

from kafka_lite.connect.errors import ConnectException


class ConnectRestException(ConnectException):
    def __init__(self, status_code: int, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.error_code = status_code if error_code is None else error_code


class BadRequestException(ConnectRestException):
    """The request itself is wrong (400): a bad body, a bad connector name, an invalid config."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)
