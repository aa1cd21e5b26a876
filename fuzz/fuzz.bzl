"""cc_fuzz_target: a libFuzzer target, and its corpus as a regression test.

cc_fuzz_target(name = "quantity_fuzzer", srcs = [...], deps = [...]) makes
  - :quantity_fuzzer, a binary defining LLVMFuzzerTestOneInput. Under
    --config=fuzz (--define=fuzz=1) it links libFuzzer's main
    (-fsanitize=fuzzer) and is what tools/fuzz runs; otherwise it links
    :standalone_main, which runs each input file it is given once.
  - :quantity_fuzzer_corpus_test, the same code with :standalone_main run
    over fuzz/corpus/quantity_fuzzer/ (every checked-in input once): under gcc
    a regression test that bazel test //... runs.
"""

def cc_fuzz_target(name, srcs, deps = [], **kwargs):
    native.cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = srcs,
        deps = deps + ["//fuzz:quiet"],
        alwayslink = True,
        **kwargs
    )
    native.cc_binary(
        name = name,
        testonly = True,
        deps = [":" + name + "_lib"] + select({
            "//fuzz:fuzzing": [],
            "//conditions:default": ["//fuzz:standalone_main"],
        }),
        linkopts = select({
            "//fuzz:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["fuzz_target"],
    )
    native.cc_test(
        name = name + "_corpus_test",
        size = "small",
        args = ["fuzz/corpus/" + name],
        data = native.glob(["corpus/" + name + "/*"]),
        deps = [
            ":" + name + "_lib",
            "//fuzz:standalone_main",
        ],
    )
