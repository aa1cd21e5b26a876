"""Link options shared by the project's binaries."""

# jobsetd and jobset-agent run for months on every host; linked against
# Debian's ~75 shared libraries (each Abseil component is its own .so), each
# process kept ~20 MiB of their pages resident and paid their relocations at
# start. They link every library statically that Debian ships an archive of;
# prometheus-cpp has none, so it and the C and C++ runtimes it needs stay
# shared ("-Wl,-Bdynamic" before it, in WORKSPACE). Sanitizer builds
# (--define=dynamic_link=1) link everything dynamically.
MOSTLY_STATIC_LINKOPTS = select({
    "//common:dynamic_link": [],
    "//conditions:default": ["-Wl,-Bstatic"],
})
