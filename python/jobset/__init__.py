"""jobset: a Python client for jobsetd, the JobSet gang scheduler.

    import jobset
    with jobset.Client.from_config() as client:   # or Client("127.0.0.1:7070")
        client.apply("train.yaml")          # dict, YAML text or a file path
        client.wait("train", "Completed", timeout=3600)

Needs Debian's python3-grpcio, python3-protobuf and python3-yaml, and the
generated modules of proto/*.proto on sys.path (python/README.md).
"""

from jobset.client import ApplyResult, Client, condition, to_dict
from jobset.errors import (ApiError, ConditionNotMetError, ConfigError,
                           Forbidden, InvalidError, JobSetError,
                           ManifestError, NotFoundError, Unauthenticated,
                           UnavailableError, WaitTimeoutError)
from jobset.kueue import load as load_kueue_manifest
from jobset.manifest import load as load_manifest
from jobset import progress  # jobset.progress.report(step=...)

__all__ = [
    "ApiError", "ApplyResult", "Client", "ConditionNotMetError",
    "ConfigError", "Forbidden", "InvalidError", "JobSetError",
    "ManifestError", "NotFoundError", "Unauthenticated", "UnavailableError",
    "WaitTimeoutError", "condition", "load_kueue_manifest", "load_manifest",
    "progress", "to_dict",
]
