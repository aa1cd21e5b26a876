"""Generates C++ (and gRPC) code from .proto files with the system protoc.

Debian's protoc and grpc_cpp_plugin are used through a genrule because Bazel 4.2.3's
native proto rules need a protobuf source repository that is not available offline.
Imports are relative to the workspace root: `import "proto/k8s.proto";`.
"""

def cc_proto(name, srcs, deps = [], grpc = False):
    """A cc_library `name` with the generated code of `srcs`.

    Args:
      name: the library's name.
      srcs: .proto files in this package.
      deps: cc_proto targets the protos import.
      grpc: also generate gRPC service stubs.
    """
    bases = [s[:-len(".proto")] for s in srcs]
    outs = [b + ".pb.h" for b in bases] + [b + ".pb.cc" for b in bases]
    plugin = ""
    if grpc:
        outs += [b + ".grpc.pb.h" for b in bases] + [b + ".grpc.pb.cc" for b in bases]
        plugin = " --grpc_out=$(GENDIR) --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin"
    native.genrule(
        name = name + "_gen",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = outs,
        cmd = "/usr/bin/protoc -I. -I/usr/include --cpp_out=$(GENDIR)" + plugin +
              " " + " ".join(["$(location %s)" % s for s in srcs]),
    )
    native.filegroup(
        name = name + "_srcs",
        srcs = srcs + [d + "_srcs" for d in deps],
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["@system//:protobuf"] + (["@system//:grpcpp"] if grpc else []),
    )
