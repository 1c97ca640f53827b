# backends/cpu/configure.m4 - detection of the cpu backend (m4_include'd by
# configure.ac; see m4/vt_backend.m4 for the folder convention).
#
# The host CPU needs nothing beyond the C compiler, pthreads and libm, which
# configure.ac checks for the whole tree: always built, always searched.
VT_BACKEND([cpu], [backends/cpu])
