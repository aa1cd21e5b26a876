"""Exceptions raised by the jobset client."""

import grpc


class JobSetError(Exception):
    """Base class of every error this package raises."""


class ManifestError(JobSetError, ValueError):
    """A manifest could not be read: bad YAML, unknown fields, wrong types.

    The message names the document and field path, e.g.
    "manifest document 1: spec.replicatedJob: unknown field".
    """


class ConfigError(JobSetError, ValueError):
    """The client config file cannot be used: it names a context, cluster
    or user that is not there, a field is malformed, a file is missing.

    The message says what is wrong, e.g. "context 'x' not found in FILE".
    """


class ApiError(JobSetError):
    """jobsetd refused or failed a request.

    Attributes:
      code: the grpc.StatusCode (INVALID_ARGUMENT, NOT_FOUND, ...).
      message: jobsetd's message (field paths included for invalid specs).
      address: the server's address.
    """

    def __init__(self, code, message, address=""):
        self.code = code
        self.message = message
        self.address = address
        super().__init__(f"{code.name}: {message}")


class NotFoundError(ApiError):
    """The JobSet (or node) does not exist."""


class InvalidError(ApiError):
    """The request or the JobSet's spec is invalid (INVALID_ARGUMENT)."""


class UnavailableError(ApiError):
    """jobsetd cannot be reached (or did not answer in time)."""


class Unauthenticated(ApiError):
    """jobsetd refused the credentials (UNAUTHENTICATED): a wrong, expired
    or deleted token, or a certificate it does not trust."""


class Forbidden(ApiError):
    """The caller may not do this (PERMISSION_DENIED); the message is
    jobsetd's, in Kubernetes' wording ('User "x" cannot create resource
    ...', or a Pod Security refusal: '... violates PodSecurity
    "baseline:latest": ...')."""


class WaitTimeoutError(JobSetError, TimeoutError):
    """wait() did not see the condition before its timeout."""


class ConditionNotMetError(JobSetError):
    """wait() saw the JobSet end otherwise (or be deleted).

    Attributes:
      jobset: the JobSet's last state (None when it was deleted).
    """

    def __init__(self, message, jobset=None):
        self.jobset = jobset
        super().__init__(message)


def from_rpc_error(error, address, method, tls=False, config_path="",
                   note="", timeout=None):
    """Converts a grpc.RpcError into the matching ApiError subclass.
    `note` (" (...)") says what the client tried, for UNAVAILABLE and
    DEADLINE_EXCEEDED; `timeout` is the call's, in seconds."""
    code = error.code()
    details = error.details() or ""
    if code == grpc.StatusCode.UNAVAILABLE:
        # Nothing listening is not a TLS problem.
        hint = (" (TLS handshake failed? check certificate-authority / "
                "tls-server-name)") if (
                    tls and "Connection refused" not in details) else ""
        return UnavailableError(
            code, f"cannot reach jobsetd at {address}: {details}{hint}{note}",
            address)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        where = config_path or "the token given"
        return Unauthenticated(
            code, f"jobsetd refused the credentials: {details} (check the "
            f"token or certificate in {where})", address)
    if code == grpc.StatusCode.PERMISSION_DENIED:
        return Forbidden(code, details, address)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        within = f" within {timeout:g}s" if timeout is not None else " in time"
        return UnavailableError(
            code, f"jobsetd at {address} did not answer {method}{within}"
            f"{note}", address)
    if code == grpc.StatusCode.NOT_FOUND:
        return NotFoundError(code, details, address)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidError(code, details, address)
    return ApiError(code, details, address)
