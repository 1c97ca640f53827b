# backends/example/configure.m4 - detection of the example backend
# (m4_include'd by configure.ac; m4/vt_backend.m4 has the convention).
#
# A backend's configure.m4 finds what the backend needs (its runtime's
# headers and libraries, a device compiler: see backends/rocm/configure.m4),
# substitutes what its Makefile.am uses, and ends with
#   VT_BACKEND([name], [backends/name], [shell test: can it be built])
# which configures its Makefile, enters its folder in the build and lets the
# uninstalled libvt find it. Nothing else in the tree names the backend.
#
# The example needs nothing but libvt, so it is always built. It is a
# teaching copy: its Makefile.am does not install it, and the fourth
# argument keeps it out of the build tree's search path, so `vtctl
# backend-list` does not show it (tests/test_example.c loads it by path).
VT_BACKEND([example], [backends/example], [true], [no])
