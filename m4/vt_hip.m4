# VT_CHECK_HIP
# ------------
# The rocm backend is HIP. It builds for AMD with hipcc, or for NVIDIA with
# nvcc through the project's own HIP->CUDA header (backends/rocm/hip_cuda.h).
#
#   --with-hip-platform=auto|amd|nvidia|no   (default auto: amd if hipcc works)
#   --with-hip-arch=LIST      AMD default gfx90a,gfx1030; NVIDIA default sm_90
#   --with-hipcc=PATH         the AMD HIP compiler driver
#   --with-rocm-device-lib-path=DIR   AMD device bitcode (Debian: amdgcn/bitcode)
#   --with-cuda=DIR           CUDA toolkit root for the NVIDIA build
#
# Substitutes HIP_PLATFORM (amd|nvidia), DEVCC (the device compiler command),
# DEVCC_FLAGS, HIP_CPPFLAGS (for the plugin's C files) and HIP_LIBS.
AC_DEFUN([VT_CHECK_HIP], [
  AC_ARG_WITH([hip-platform],
    [AS_HELP_STRING([--with-hip-platform=auto|amd|nvidia|no],
      [build the rocm backend for AMD (hipcc) or NVIDIA (nvcc) @<:@auto@:>@])],
    [vt_hip_platform=$withval], [vt_hip_platform=auto])
  AC_ARG_WITH([hip-arch],
    [AS_HELP_STRING([--with-hip-arch=LIST],
      [comma-separated GPU targets @<:@gfx90a,gfx1030 for amd, sm_90 for nvidia@:>@])],
    [vt_hip_arch=$withval], [vt_hip_arch=])
  AC_ARG_WITH([hipcc],
    [AS_HELP_STRING([--with-hipcc=PATH], [HIP compiler driver for AMD @<:@hipcc@:>@])],
    [vt_hipcc=$withval], [vt_hipcc=])
  AC_ARG_WITH([rocm-device-lib-path],
    [AS_HELP_STRING([--with-rocm-device-lib-path=DIR],
      [AMD device library bitcode directory @<:@auto-detected@:>@])],
    [vt_rocm_devlib=$withval], [vt_rocm_devlib=])
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit for the NVIDIA build @<:@/usr/local/cuda@:>@])],
    [vt_cuda=$withval], [vt_cuda=])

  HIP_PLATFORM=
  DEVCC=
  DEVCC_FLAGS=
  HIP_CPPFLAGS=
  HIP_LIBS=
  vt_hip_summary="not built"
  vt_hip_fail=

  case "$vt_hip_platform" in
    auto|amd|nvidia|no) ;;
    yes) vt_hip_platform=auto ;;
    *) AC_MSG_ERROR([--with-hip-platform must be auto, amd, nvidia or no, not '$vt_hip_platform']) ;;
  esac

  dnl ---- AMD: hipcc, hip/hip_runtime_api.h, libamdhip64 ----
  AS_IF([test "x$vt_hip_platform" = xauto || test "x$vt_hip_platform" = xamd], [
    AS_IF([test -z "$vt_hipcc"], [AC_PATH_PROG([vt_hipcc], [hipcc], [], [$PATH:/opt/rocm/bin])])
    vt_amd_ok=yes
    AS_IF([test -z "$vt_hipcc" || test ! -x "$vt_hipcc"], [vt_amd_ok=no; vt_hip_fail="hipcc not found"])
    AS_IF([test "x$vt_amd_ok" = xyes], [
      vt_save_CPPFLAGS=$CPPFLAGS
      CPPFLAGS="$CPPFLAGS -D__HIP_PLATFORM_AMD__"
      AC_CHECK_HEADER([hip/hip_runtime_api.h], [],
        [vt_amd_ok=no; vt_hip_fail="hip/hip_runtime_api.h not found"])
      CPPFLAGS=$vt_save_CPPFLAGS
    ])
    AS_IF([test "x$vt_amd_ok" = xyes], [
      vt_save_LIBS=$LIBS
      AC_CHECK_LIB([amdhip64], [hipGetDeviceCount], [],
        [vt_amd_ok=no; vt_hip_fail="libamdhip64 not found"])
      LIBS=$vt_save_LIBS
    ])
    AS_IF([test "x$vt_amd_ok" = xyes], [
      AS_IF([test -z "$vt_rocm_devlib"], [
        for d in /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /usr/lib/amdgcn/bitcode \
                 /opt/rocm/amdgcn/bitcode /opt/rocm/lib/llvm/lib/clang/*/lib/amdgcn/bitcode; do
          AS_IF([test -f "$d/ocml.bc"], [vt_rocm_devlib=$d; break])
        done
      ])
      AS_IF([test -z "$vt_hip_arch"], [vt_hip_arch="gfx90a,gfx1030"])
      HIP_PLATFORM=amd
      DEVCC=$vt_hipcc
      DEVCC_FLAGS="-x hip -fPIC -O3 -std=c++17 -D__HIP_PLATFORM_AMD__"
      for a in `echo "$vt_hip_arch" | tr ',' ' '`; do
        case "$a" in
          gfx*) DEVCC_FLAGS="$DEVCC_FLAGS --offload-arch=$a" ;;
          *) AC_MSG_ERROR([AMD target '$a' in --with-hip-arch is not a gfx name]) ;;
        esac
      done
      AS_IF([test -n "$vt_rocm_devlib"],
        [DEVCC_FLAGS="$DEVCC_FLAGS --rocm-device-lib-path=$vt_rocm_devlib"])
      HIP_CPPFLAGS="-D__HIP_PLATFORM_AMD__"
      HIP_LIBS="-lamdhip64"
      vt_hip_summary="hip-amd ($vt_hipcc, targets $vt_hip_arch)"
    ], [test "x$vt_hip_platform" = xamd], [
      AC_MSG_ERROR([--with-hip-platform=amd: $vt_hip_fail])
    ])
  ])

  dnl ---- NVIDIA: nvcc and the CUDA runtime, through backends/rocm/hip_cuda.h ----
  AS_IF([test -z "$HIP_PLATFORM" && { test "x$vt_hip_platform" = xnvidia || test "x$vt_hip_platform" = xauto; }], [
    AS_IF([test -z "$vt_cuda"], [
      AC_PATH_PROG([vt_nvcc_path], [nvcc], [], [$PATH:/usr/local/cuda/bin])
      dnl nvcc on PATH may be a wrapper script or a link (/usr/local/bin/nvcc
      dnl exec'ing /usr/local/cuda-13.0/bin/nvcc): ask nvcc for its own root
      dnl (TOP in --dryrun), then try the resolved link, then the parent of bin/.
      AS_IF([test -n "$vt_nvcc_path"], [
        AC_MSG_CHECKING([for the CUDA toolkit root of $vt_nvcc_path])
        vt_cand=`echo | "$vt_nvcc_path" --dryrun -x cu -c - -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -n 1`
        vt_real=`readlink -f "$vt_nvcc_path" 2>/dev/null`
        for c in "$vt_cand" "${vt_real:+`dirname "$vt_real"`/..}" "`dirname "$vt_nvcc_path"`/.."; do
          AS_IF([test -n "$c" && test -x "$c/bin/nvcc" && test -f "$c/include/cuda_runtime_api.h"],
            [vt_cuda=`cd "$c" && pwd -P`; break])
        done
        AS_IF([test -z "$vt_cuda"], [vt_cuda=`dirname "$vt_nvcc_path"`; vt_cuda=`dirname "$vt_cuda"`])
        AC_MSG_RESULT([$vt_cuda])
      ])
    ])
    vt_nv_ok=yes
    AS_IF([test -z "$vt_cuda" || test ! -x "$vt_cuda/bin/nvcc"],
      [vt_nv_ok=no; vt_hip_fail="${vt_hip_fail:+$vt_hip_fail; }nvcc not found"])
    AS_IF([test "x$vt_nv_ok" = xyes && test ! -f "$vt_cuda/include/cuda_runtime_api.h"],
      [vt_nv_ok=no; vt_hip_fail="$vt_cuda/include/cuda_runtime_api.h not found"])
    vt_cuda_libdir=
    for d in "$vt_cuda/lib64" "$vt_cuda/lib" "$vt_cuda/targets/x86_64-linux/lib"; do
      AS_IF([test -f "$d/libcudart_static.a"], [vt_cuda_libdir=$d; break])
    done
    AS_IF([test "x$vt_nv_ok" = xyes && test -z "$vt_cuda_libdir"],
      [vt_nv_ok=no; vt_hip_fail="libcudart_static.a not found under $vt_cuda"])
    dnl auto only picks NVIDIA when asked for it explicitly or AMD is absent
    dnl and nvcc is present; an explicit request that fails is an error.
    AS_IF([test "x$vt_nv_ok" = xyes && test "x$vt_hip_platform" = xnvidia], [
      AS_IF([test -z "$vt_hip_arch"], [vt_hip_arch="sm_90"])
      HIP_PLATFORM=nvidia
      DEVCC="$vt_cuda/bin/nvcc"
      DEVCC_FLAGS="-x cu -O3 -std=c++17 -Xcompiler -fPIC -DVT_HIP_PLATFORM_NVIDIA"
      vt_last_sm=
      for a in `echo "$vt_hip_arch" | tr ',' ' '`; do
        case "$a" in
          sm_*) n=`echo "$a" | sed 's/^sm_//'`
                DEVCC_FLAGS="$DEVCC_FLAGS -gencode arch=compute_$n,code=sm_$n"; vt_last_sm=$n ;;
          *) AC_MSG_ERROR([NVIDIA target '$a' in --with-hip-arch is not an sm_XY name]) ;;
        esac
      done
      dnl PTX of the newest target too, so newer GPUs can JIT it.
      DEVCC_FLAGS="$DEVCC_FLAGS -gencode arch=compute_$vt_last_sm,code=compute_$vt_last_sm"
      HIP_CPPFLAGS="-DVT_HIP_PLATFORM_NVIDIA -I$vt_cuda/include"
      HIP_LIBS="-L$vt_cuda_libdir -lcudart_static -ldl -lrt"
      vt_hip_summary="hip-nvidia ($vt_cuda/bin/nvcc, targets $vt_hip_arch)"
    ], [test "x$vt_hip_platform" = xnvidia], [
      AC_MSG_ERROR([--with-hip-platform=nvidia: $vt_hip_fail])
    ])
  ])

  AS_IF([test -z "$HIP_PLATFORM" && test "x$vt_hip_platform" = xauto],
    [vt_hip_summary="not built ($vt_hip_fail)"])
  AS_IF([test "x$vt_hip_platform" = xno], [vt_hip_summary="not built (--with-hip-platform=no)"])

  AC_SUBST([HIP_PLATFORM])
  AC_SUBST([DEVCC])
  AC_SUBST([DEVCC_FLAGS])
  AC_SUBST([HIP_CPPFLAGS])
  AC_SUBST([HIP_LIBS])
  AM_CONDITIONAL([VT_BUILD_ROCM], [test -n "$HIP_PLATFORM"])
  AM_CONDITIONAL([VT_HIP_AMD], [test "x$HIP_PLATFORM" = xamd])
  AM_CONDITIONAL([VT_HIP_NVIDIA], [test "x$HIP_PLATFORM" = xnvidia])
])
