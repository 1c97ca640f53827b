# backends/rocm/configure.m4 - detection of the rocm backend (m4_include'd
# by configure.ac; see m4/vt_backend.m4 for the folder convention).
#
# The rocm backend is HIP. It builds for AMD with hipcc, or for NVIDIA with
# nvcc through the project's own HIP->CUDA header (backends/rocm/hip_cuda.h).
#
#   --with-hip-platform=auto|amd|nvidia|no   (default auto: amd if hipcc works)
#   --with-hip-arch=LIST|native
#                             AMD default: every arch of VT_HIP_AMD_ARCHS the
#                             installed hipcc accepts (each probed); NVIDIA
#                             default sm_90; native: the local GPUs' archs
#                             (amdgpu-arch or rocm_agent_enumerator on AMD,
#                             nvidia-smi on NVIDIA), an error when none answers
#   --with-hipcc=PATH         the AMD HIP compiler driver
#   --with-rocm-device-lib-path=DIR   AMD device bitcode (Debian: amdgcn/bitcode)
#   --with-cuda=DIR           CUDA toolkit root for the NVIDIA build
#   --with-vendor-blas        route large dense f16/bf16 MatMuls to the vendor
#                             library (NVIDIA: cuBLASLt, required when asked;
#                             AMD: not wired, a warning); off by default: the
#                             project's own GEMM kernel is the tested path
#
# Substitutes HIP_PLATFORM (amd|nvidia), DEVCC (the device compiler command),
# DEVCC_FLAGS, HIP_CPPFLAGS (for the plugin's C files) and HIP_LIBS; defines
# VT_HIP_ARCHS (the list built for, named by the probe when a device's arch
# has no code object).
m4_define([VT_HIP_AMD_ARCHS], [gfx90a gfx942 gfx1030 gfx1100 gfx1151 gfx1200 gfx1201])

# _VT_HIP_NATIVE_AMD: the local AMD GPUs' archs into vt_hip_arch, or an error.
AC_DEFUN([_VT_HIP_NATIVE_AMD], [
  AC_MSG_CHECKING([for the local AMD GPUs' archs (--with-hip-arch=native)])
  vt_native=
  vt_native_tools=
  for t in amdgpu-arch /opt/rocm/llvm/bin/amdgpu-arch /opt/rocm/bin/amdgpu-arch /usr/lib/llvm-*/bin/amdgpu-arch \
           rocm_agent_enumerator /opt/rocm/bin/rocm_agent_enumerator; do
    case "$t" in
      /*) vt_tool=$t; test -x "$vt_tool" || continue ;;
      *) vt_tool=`command -v "$t" 2>/dev/null` || continue ;;
    esac
    vt_native_tools="$vt_native_tools $vt_tool"
    dnl gfx000 is the CPU agent of rocm_agent_enumerator; feature suffixes (:xnack-) dropped.
    vt_native=`"$vt_tool" 2>/dev/null | sed 's/:.*//' | grep '^gfx[[0-9a-f]]*$' | grep -v '^gfx000$' | sort -u | tr '\n' ',' | sed 's/,$//'`
    test -n "$vt_native" && break
  done
  AS_IF([test -z "$vt_native"], [
    AC_MSG_RESULT([none])
    AS_IF([test -z "$vt_native_tools"],
      [AC_MSG_ERROR([--with-hip-arch=native: neither amdgpu-arch nor rocm_agent_enumerator is installed; name the targets, e.g. --with-hip-arch=gfx1151,gfx1200])],
      [AC_MSG_ERROR([--with-hip-arch=native: no AMD GPU reported by$vt_native_tools (is /dev/kfd accessible?); name the targets, e.g. --with-hip-arch=gfx1151,gfx1200])])
  ])
  AC_MSG_RESULT([$vt_native])
  vt_hip_arch=$vt_native
])

# _VT_HIP_PROBE_AMD_ARCHS: every arch of VT_HIP_AMD_ARCHS that $DEVCC
# compiles a kernel for (with DEVCC_FLAGS) into vt_hip_arch.
AC_DEFUN([_VT_HIP_PROBE_AMD_ARCHS], [
  vt_taken=
  vt_dropped=
  cat > conftest.hip <<_VT_EOF
#include <hip/hip_runtime.h>
__global__ void vt_conftest_kernel(int *p) { if (p) *p = 1; }
_VT_EOF
  for a in VT_HIP_AMD_ARCHS; do
    AC_MSG_CHECKING([whether $DEVCC builds for $a])
    AS_IF([$DEVCC $DEVCC_FLAGS --offload-arch=$a -c conftest.hip -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes]); vt_taken="${vt_taken:+$vt_taken,}$a"],
      [AC_MSG_RESULT([no]); vt_dropped="${vt_dropped:+$vt_dropped,}$a"])
  done
  rm -f conftest.hip conftest.$OBJEXT
  AS_IF([test -z "$vt_taken"],
    [AC_MSG_ERROR([$DEVCC builds for none of VT_HIP_AMD_ARCHS (see config.log); name the targets with --with-hip-arch])])
  AC_MSG_NOTICE([AMD targets taken: $vt_taken; dropped (this hipcc refuses them): ${vt_dropped:-none}])
  vt_hip_arch=$vt_taken
  vt_hip_arch_note=" (default list; dropped: ${vt_dropped:-none})"
])

# _VT_HIP_NATIVE_NVIDIA: the local NVIDIA GPUs' sm_XY into vt_hip_arch.
AC_DEFUN([_VT_HIP_NATIVE_NVIDIA], [
  AC_MSG_CHECKING([for the local NVIDIA GPUs' archs (--with-hip-arch=native)])
  vt_native=
  AS_IF([command -v nvidia-smi >/dev/null 2>&1], [
    vt_native=`nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep '^[[0-9]][[0-9]]*$' | sort -u | sed 's/^/sm_/' | tr '\n' ',' | sed 's/,$//'`
  ])
  AS_IF([test -z "$vt_native"], [
    AC_MSG_RESULT([none])
    AC_MSG_ERROR([--with-hip-arch=native: nvidia-smi is missing or reports no GPU; name the targets, e.g. --with-hip-arch=sm_90])
  ])
  AC_MSG_RESULT([$vt_native])
  vt_hip_arch=$vt_native
])

AC_DEFUN([VT_CHECK_HIP], [
  AC_ARG_WITH([hip-platform],
    [AS_HELP_STRING([--with-hip-platform=auto|amd|nvidia|no],
      [build the rocm backend for AMD (hipcc) or NVIDIA (nvcc) @<:@auto@:>@])],
    [vt_hip_platform=$withval], [vt_hip_platform=auto])
  AC_ARG_WITH([hip-arch],
    [AS_HELP_STRING([--with-hip-arch=LIST],
      [comma-separated GPU targets, or native for the local GPUs @<:@amd: every one of gfx90a gfx942 gfx1030 gfx1100 gfx1151 gfx1200 gfx1201 the installed hipcc accepts; nvidia: sm_90@:>@])],
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

  AC_ARG_WITH([vendor-blas],
    [AS_HELP_STRING([--with-vendor-blas],
      [route large dense f16/bf16 MatMuls to cuBLASLt on NVIDIA builds (x rounded to the weight type) @<:@no@:>@])],
    [vt_vendor_blas=$withval], [vt_vendor_blas=no])
  case "$vt_vendor_blas" in
    yes|no) ;;
    *) AC_MSG_ERROR([--with-vendor-blas takes no value (yes or no), not '$vt_vendor_blas']) ;;
  esac

  HIP_PLATFORM=
  DEVCC=
  DEVCC_FLAGS=
  HIP_CPPFLAGS=
  HIP_LIBS=
  vt_hip_summary="not built"
  vt_hip_fail=
  vt_hip_arch_note=

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
      HIP_PLATFORM=amd
      DEVCC=$vt_hipcc
      DEVCC_FLAGS="-x hip -fPIC -O3 -std=c++17 -D__HIP_PLATFORM_AMD__"
      AS_IF([test -n "$vt_rocm_devlib"],
        [DEVCC_FLAGS="$DEVCC_FLAGS --rocm-device-lib-path=$vt_rocm_devlib"])
      AS_IF([test "x$vt_hip_arch" = xnative], [_VT_HIP_NATIVE_AMD],
            [test -z "$vt_hip_arch"], [_VT_HIP_PROBE_AMD_ARCHS])
      for a in `echo "$vt_hip_arch" | tr ',' ' '`; do
        case "$a" in
          gfx*) DEVCC_FLAGS="$DEVCC_FLAGS --offload-arch=$a" ;;
          *) AC_MSG_ERROR([AMD target '$a' in --with-hip-arch is not a gfx name]) ;;
        esac
      done
      HIP_CPPFLAGS="-D__HIP_PLATFORM_AMD__"
      HIP_LIBS="-lamdhip64"
      vt_hip_summary="hip-amd ($vt_hipcc, targets $vt_hip_arch$vt_hip_arch_note)"
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
      AS_IF([test "x$vt_hip_arch" = xnative], [_VT_HIP_NATIVE_NVIDIA],
            [test -z "$vt_hip_arch"], [vt_hip_arch="sm_90"])
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

  dnl ---- --with-vendor-blas: cuBLASLt for NVIDIA builds ----
  AS_IF([test "x$vt_vendor_blas" = xyes && test "x$HIP_PLATFORM" = xnvidia], [
    AC_MSG_CHECKING([for cuBLASLt in $vt_cuda])
    AS_IF([test -f "$vt_cuda/include/cublasLt.h" && test -f "$vt_cuda_libdir/libcublasLt.so"], [
      AC_MSG_RESULT([yes])
      HIP_CPPFLAGS="$HIP_CPPFLAGS -DVT_VENDOR_BLAS"
      HIP_LIBS="$HIP_LIBS -L$vt_cuda_libdir -lcublasLt"
      vt_hip_summary="$vt_hip_summary, vendor BLAS cuBLASLt for dense f16/bf16 MatMul"
    ], [
      AC_MSG_RESULT([no])
      AC_MSG_ERROR([--with-vendor-blas: cublasLt.h or libcublasLt.so not found under $vt_cuda])
    ])
  ], [test "x$vt_vendor_blas" = xyes && test "x$HIP_PLATFORM" = xamd], [
    AC_MSG_WARN([--with-vendor-blas: the AMD route (hipBLASLt/rocBLAS) is not wired; the project's kernels stay in use])
  ])

  AS_IF([test -z "$HIP_PLATFORM" && test "x$vt_hip_platform" = xauto],
    [vt_hip_summary="not built ($vt_hip_fail)"])
  AS_IF([test "x$vt_hip_platform" = xno], [vt_hip_summary="not built (--with-hip-platform=no)"])

  AS_IF([test -n "$HIP_PLATFORM"],
    [AC_DEFINE_UNQUOTED([VT_HIP_ARCHS], ["$vt_hip_arch"], [GPU targets the rocm backend is built for])])
  AC_SUBST([HIP_PLATFORM])
  AC_SUBST([DEVCC])
  AC_SUBST([DEVCC_FLAGS])
  AC_SUBST([HIP_CPPFLAGS])
  AC_SUBST([HIP_LIBS])
  AM_CONDITIONAL([VT_BUILD_ROCM], [test -n "$HIP_PLATFORM"])
  AM_CONDITIONAL([VT_HIP_AMD], [test "x$HIP_PLATFORM" = xamd])
  AM_CONDITIONAL([VT_HIP_NVIDIA], [test "x$HIP_PLATFORM" = xnvidia])
])

dnl Run the detection here, where configure.ac includes this file, and
dnl register the folder: built (and searched from the build tree) only when
dnl a device compiler was found.
VT_CHECK_HIP
VT_BACKEND([rocm], [backends/rocm], [test -n "$HIP_PLATFORM"])
