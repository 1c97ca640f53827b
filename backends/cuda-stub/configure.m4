# backends/cuda-stub/configure.m4 - detection of the cuda-stub backend
# (m4_include'd by configure.ac; see m4/vt_backend.m4).
#
# The test double of a discrete CUDA device: no runtime to look for, always
# built and searched (the suites and `vtctl backend-list` expect it).
VT_BACKEND([cuda-stub], [backends/cuda-stub])
