"""Reads JobSet manifests (upstream YAML/JSON, unchanged) into protos.

Follows api/manifest.cc: field names are the proto's JSON names; a field
that Kubernetes has and jobsetd ignores (listed with the ignored_field
option in proto/k8s.proto) is dropped with a warning naming its path; any
other unknown field is an error. IntOrString and quantity fields accept
numbers. Timestamps that YAML reads as dates become RFC 3339 strings.
"""

import datetime
import os

import yaml
from google.protobuf import descriptor as _descriptor
from google.protobuf import json_format

from jobset.errors import ManifestError
from proto import jobset_pb2
from proto import options_pb2

API_VERSION = "jobset.x-k8s.io/v1alpha2"
KIND = "JobSet"

_FD = _descriptor.FieldDescriptor


def _child(path, key):
    return f"{path}.{key}" if path else key


def _ignored_fields(message_descriptor):
    options = message_descriptor.GetOptions()
    return set(options.Extensions[options_pb2.ignored_field])


def _scalar(value, field, path, errors, int_or_string=False):
    """Adjusts a YAML scalar for json_format (None: drop it)."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        # YAML 1.1 reads unquoted dates as dates; Kubernetes keeps the text.
        value = value.isoformat()
    if field.cpp_type == _FD.CPPTYPE_STRING and not isinstance(value, str):
        int_or_string = int_or_string or \
            field.GetOptions().Extensions[options_pb2.int_or_string]
        if int_or_string and isinstance(value, (int, float)) and \
                not isinstance(value, bool):
            return str(value)
        errors.append(f"{path}: expected a string, got {value!r} "
                      "(quote the value)")
        return None
    return value


def _normalize(value, message_descriptor, path, errors, warnings):
    """Returns `value` (a dict for `message_descriptor`) ready for ParseDict."""
    if message_descriptor.full_name == "google.protobuf.Timestamp":
        if isinstance(value, datetime.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=datetime.timezone.utc)
            return value.isoformat().replace("+00:00", "Z")
        return value
    if message_descriptor.full_name in ("google.protobuf.Struct",
                                        "google.protobuf.Value"):
        return value
    if not isinstance(value, dict):
        errors.append(f"{path or '<root>'}: expected an object, got "
                      f"{type(value).__name__}")
        return None
    by_json = {f.json_name: f for f in message_descriptor.fields}
    ignored = _ignored_fields(message_descriptor)
    out = {}
    for key, item in value.items():
        item_path = _child(path, key)
        field = by_json.get(key)
        if field is None:
            if key in ignored:
                warnings.append(f"{item_path}: ignored by jobsetd")
            else:
                errors.append(f"{item_path}: unknown field")
            continue
        if item is None:
            continue  # `field:` means unset, as in Kubernetes.
        if field.message_type is not None and \
                field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            # IntOrString maps (resources) carry the option on the map field.
            numbers_ok = field.GetOptions().Extensions[
                options_pb2.int_or_string]
            if not isinstance(item, dict):
                errors.append(f"{item_path}: expected an object")
                continue
            entries = {}
            for k, v in item.items():
                entry_path = f"{item_path}[{k}]"
                if value_field.message_type is not None:
                    v = _normalize(v, value_field.message_type, entry_path,
                                   errors, warnings)
                else:
                    v = _scalar(v, value_field, entry_path, errors,
                                int_or_string=numbers_ok)
                if v is not None:
                    entries[str(k)] = v
            out[key] = entries
        elif field.label == _FD.LABEL_REPEATED:
            if not isinstance(item, list):
                errors.append(f"{item_path}: expected a list")
                continue
            items = []
            for i, element in enumerate(item):
                element_path = f"{item_path}[{i}]"
                if field.message_type is not None:
                    element = _normalize(element, field.message_type,
                                         element_path, errors, warnings)
                else:
                    element = _scalar(element, field, element_path, errors)
                if element is not None:
                    items.append(element)
            out[key] = items
        elif field.message_type is not None:
            normalized = _normalize(item, field.message_type, item_path,
                                    errors, warnings)
            if normalized is not None:
                out[key] = normalized
        else:
            normalized = _scalar(item, field, item_path, errors)
            if normalized is not None:
                out[key] = normalized
    return out


def fill(message, document, what="manifest", errors=None, check=None):
    """Reads `document` (an upstream dict) into `message` as this module
    reads JobSets; returns the warnings. `errors`: ones found already;
    `check`, called when the fields read, may add more. Raises
    ManifestError naming every bad field path."""
    errors, warnings = list(errors or []), []
    normalized = _normalize(document, message.DESCRIPTOR, "", errors,
                            warnings)
    if not errors and check is not None:
        check(errors)
    if errors:
        raise ManifestError(f"{what} is invalid: " + "; ".join(errors))
    try:
        json_format.ParseDict(normalized, message)
    except json_format.ParseError as e:
        raise ManifestError(f"{what} is invalid: {e}") from e
    return warnings


def jobset_from_dict(document, what="manifest"):
    """Returns (JobSet proto, warnings) for one upstream JobSet dict.

    Raises ManifestError naming every bad field path.
    """
    def check(errors):
        if document.get("kind") != KIND:
            errors.append(f"kind: Unsupported value: {document.get('kind')!r}:"
                          f" supported values: \"{KIND}\"")
        if document.get("apiVersion") != API_VERSION:
            errors.append(f"apiVersion: Unsupported value: "
                          f"{document.get('apiVersion')!r}: supported values:"
                          f" \"{API_VERSION}\"")

    message = jobset_pb2.JobSet()
    return message, fill(message, document, what, check=check)


def documents(manifest):
    """The documents (dicts; None for an empty one) of `manifest`: a dict,
    a list of dicts, YAML/JSON text (several documents allowed) or the path
    of a file holding it. Raises ManifestError for text that does not
    parse."""
    if isinstance(manifest, dict):
        docs = [manifest]
    elif isinstance(manifest, list):
        docs = manifest
    elif isinstance(manifest, (str, os.PathLike)):
        text = str(manifest) if not isinstance(manifest, os.PathLike) else None
        if text is None or ("\n" not in text and os.path.isfile(text)):
            with open(manifest, encoding="utf-8") as f:
                text = f.read()
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise ManifestError(f"manifest is not valid YAML or JSON: {e}") \
                from e
    else:
        raise TypeError("manifest must be a dict, a list of dicts, YAML text "
                        f"or a file path, not {type(manifest).__name__}")
    return docs


def load(manifest):
    """Reads JobSets from `manifest` (as documents() takes it).

    Returns a list of (JobSet proto, warnings). Raises ManifestError.
    """
    result = []
    for i, document in enumerate(documents(manifest), start=1):
        if document is None:
            continue
        result.append(jobset_from_dict(document, f"manifest document {i}"))
    return result
