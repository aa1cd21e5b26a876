"""Packages the Python client `jobset` with its generated protobuf and gRPC modules.

    /usr/bin/python3 -m venv --system-site-packages ENV && ENV/bin/pip install ./python

needs only Debian's python3-grpcio, python3-protobuf, python3-yaml (at run time), python3-pip,
python3-setuptools and python3-wheel, and to build, protoc and grpc_python_plugin
(protobuf-compiler, protobuf-compiler-grpc). Nothing comes from PyPI: there is deliberately no
pyproject.toml, so pip builds with the system's setuptools instead of fetching one.

In the tree the generated modules are a top-level package `proto` (bazel-bin/python/proto,
from //python:proto_py). Installed, a top-level `proto` would clash with other software, so
they become `jobset._proto` and every `from proto import` (theirs and the client's) is
rewritten to `from jobset._proto import` in the built copy; the sources are left as they are.
The modules are generated here with protoc as //python:proto_py generates them, or taken from
$JOBSET_PROTO_PY (a directory of <name>_pb2.py and <name>_pb2_grpc.py; tools/install passes
Bazel's).
"""

import atexit
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# Read before the chdir below, so that a relative path is the caller's.
PROTO_PY = os.environ.get("JOBSET_PROTO_PY", "")
PROTO_PY = os.path.abspath(PROTO_PY) if PROTO_PY else ""
REPO = os.path.dirname(HERE)
# The same list as _PROTOS in python/BUILD.
PROTOS = ["agent", "auth", "cluster", "jobset", "jobset_service", "k8s", "kueue",
          "kueue_service", "options", "resilience"]
GENERATED = [p + "_pb2.py" for p in PROTOS] + [p + "_pb2_grpc.py" for p in PROTOS]
_FROM_PROTO = re.compile(r"^(\s*)from proto import ", re.MULTILINE)

# setuptools wants package paths relative to the current directory.
os.chdir(HERE)
# Build byproducts (build/, jobset.egg-info/) go to a scratch directory, not into the tree.
_SCRATCH = tempfile.mkdtemp(prefix="jobset-setup-")
atexit.register(shutil.rmtree, _SCRATCH, True)


def _fail(message):
    sys.stderr.write("python/setup.py: %s\n" % message)
    sys.exit(1)


def _generated_dir():
    """Returns a directory holding every module in GENERATED."""
    given = PROTO_PY
    if given:
        missing = [m for m in GENERATED if not os.path.isfile(os.path.join(given, m))]
        if missing:
            _fail("$JOBSET_PROTO_PY=%s lacks %s" % (given, ", ".join(missing)))
        return given
    for tool in ("/usr/bin/protoc", "/usr/bin/grpc_python_plugin"):
        if not os.access(tool, os.X_OK):
            _fail("%s is missing (Debian: protobuf-compiler, protobuf-compiler-grpc), or set "
                  "$JOBSET_PROTO_PY to the output of `bazel build //python:proto_py`" % tool)
    sources = [os.path.join("proto", p + ".proto") for p in PROTOS]
    missing = [s for s in sources if not os.path.isfile(os.path.join(REPO, s))]
    if missing:
        _fail("%s not found under %s (build from a checkout, or set $JOBSET_PROTO_PY)" %
              (", ".join(missing), REPO))
    out = os.path.join(_SCRATCH, "gen")
    os.makedirs(out)
    subprocess.check_call(
        ["/usr/bin/protoc", "-I.", "-I/usr/include", "--python_out=" + out,
         "--grpc_python_out=" + out,
         "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin"] + sources, cwd=REPO)
    return os.path.join(out, "proto")


def _rewrite_imports(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = _FROM_PROTO.sub(r"\1from jobset._proto import ", text)
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)


class BuildPy(build_py):
    """Adds jobset/_proto to the built package and points every import at it."""

    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "jobset")
        target = os.path.join(package, "_proto")
        if os.path.isdir(target):
            shutil.rmtree(target)
        os.makedirs(target)
        source = _generated_dir()
        for module in GENERATED:
            shutil.copyfile(os.path.join(source, module), os.path.join(target, module))
        with open(os.path.join(target, "__init__.py"), "w", encoding="utf-8") as f:
            f.write('"""jobsetd\'s API, generated from proto/*.proto."""\n')
        for path in glob.glob(os.path.join(package, "**", "*.py"), recursive=True):
            _rewrite_imports(path)


setup(
    name="jobset",
    version="0.1.0",
    description="Python client for jobsetd, a gang scheduler with Kubernetes JobSet's API",
    packages=["jobset"],
    python_requires=">=3.9",
    # Debian's python3-grpcio, python3-protobuf and python3-yaml (a venv sees them with
    # --system-site-packages).
    install_requires=["grpcio", "protobuf", "PyYAML"],
    cmdclass={"build_py": BuildPy},
    options={
        "build": {"build_base": os.path.join(_SCRATCH, "build")},
        "egg_info": {"egg_base": _SCRATCH},
    },
)
