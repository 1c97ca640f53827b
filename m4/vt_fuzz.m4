# VT_CHECK_FUZZ
# -------------
# `make fuzz` builds the libFuzzer targets (tests/fuzz/) with clang and
# -fsanitize=fuzzer,address,undefined. It is not part of `all` or `check`;
# without a working clang/libFuzzer `make fuzz` fails and says why.
#
#   --with-fuzz-cc=PATH   the clang to use (default: clang on PATH)
#   --without-fuzz-cc     never build the fuzz targets
#
# Substitutes FUZZ_CC, FUZZ_CFLAGS and FUZZ_REASON (why not, when not);
# defines the Automake conditional VT_HAVE_FUZZ.
AC_DEFUN([VT_CHECK_FUZZ], [
  AC_ARG_WITH([fuzz-cc],
    [AS_HELP_STRING([--with-fuzz-cc=PATH], [clang with libFuzzer for 'make fuzz' @<:@clang@:>@])],
    [vt_fuzz_cc=$withval], [vt_fuzz_cc=])
  FUZZ_CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
  FUZZ_CC=
  FUZZ_REASON=
  vt_have_fuzz=no
  AS_IF([test "x$vt_fuzz_cc" = xno], [FUZZ_REASON="disabled by --without-fuzz-cc"], [
    AS_IF([test -z "$vt_fuzz_cc" || test "x$vt_fuzz_cc" = xyes],
      [AC_PATH_PROGS([vt_fuzz_cc_path], [clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14])],
      [vt_fuzz_cc_path=$vt_fuzz_cc])
    AS_IF([test -z "$vt_fuzz_cc_path"], [FUZZ_REASON="clang not found (install clang, or configure --with-fuzz-cc=PATH)"], [
      AC_MSG_CHECKING([whether $vt_fuzz_cc_path links libFuzzer with ASan and UBSan])
      cat >conftest_fuzz.c <<_VTEOF
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return size > 0 && *data == 'x'; }
_VTEOF
      AS_IF([$vt_fuzz_cc_path $FUZZ_CFLAGS conftest_fuzz.c -o conftest_fuzz >&AS_MESSAGE_LOG_FD 2>&1],
        [vt_have_fuzz=yes; FUZZ_CC=$vt_fuzz_cc_path],
        [FUZZ_REASON="$vt_fuzz_cc_path cannot link -fsanitize=fuzzer,address,undefined (is the libFuzzer runtime installed? see config.log)"])
      rm -f conftest_fuzz conftest_fuzz.c
      AC_MSG_RESULT([$vt_have_fuzz])
    ])
  ])
  AS_IF([test "x$vt_have_fuzz" = xyes], [vt_fuzz_summary="yes ($FUZZ_CC)"], [vt_fuzz_summary="no: $FUZZ_REASON"])
  AC_SUBST([FUZZ_CC])
  AC_SUBST([FUZZ_CFLAGS])
  AC_SUBST([FUZZ_REASON])
  AM_CONDITIONAL([VT_HAVE_FUZZ], [test "x$vt_have_fuzz" = xyes])
])
