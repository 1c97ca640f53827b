# VT_COMPILER_FLAGS
# -----------------
# C11 with -Wall -Wextra everywhere; --enable-werror turns warnings into
# errors (CI does). Sets and substitutes VT_CFLAGS.
AC_DEFUN([VT_COMPILER_FLAGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [vt_werror=$enableval], [vt_werror=no])
  VT_CFLAGS="-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers"
  VT_CXXFLAGS="-Wall -Wextra"
  AS_IF([test "x$vt_werror" = xyes], [
    VT_CFLAGS="$VT_CFLAGS -Werror"
    VT_CXXFLAGS="$VT_CXXFLAGS -Werror"
  ])
  AC_SUBST([VT_CFLAGS])
  AC_SUBST([VT_CXXFLAGS])
])

# VT_CHECK_PTHREAD
# ----------------
# The registry lock and the CPU thread pool need POSIX threads.
AC_DEFUN([VT_CHECK_PTHREAD], [
  vt_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -pthread"
  AC_SEARCH_LIBS([pthread_create], [pthread], [],
    [AC_MSG_ERROR([POSIX threads are required])])
  CFLAGS=$vt_save_CFLAGS
  PTHREAD_CFLAGS="-pthread"
  PTHREAD_LIBS="-pthread"
  AC_SUBST([PTHREAD_CFLAGS])
  AC_SUBST([PTHREAD_LIBS])
])
