# VT_CHECK_LIBCHECK
# -----------------
# The unit suites use Check (libcheck). Without it `make check` fails
# loudly instead of reporting passes it never ran; --disable-tests builds
# without the suites on purpose.
AC_DEFUN([VT_CHECK_LIBCHECK], [
  AC_ARG_ENABLE([tests],
    [AS_HELP_STRING([--disable-tests], [do not build the Check unit suites])],
    [vt_tests=$enableval], [vt_tests=yes])
  vt_have_check=no
  AS_IF([test "x$vt_tests" != xno], [
    PKG_CHECK_MODULES([CHECK], [check >= 0.11], [vt_have_check=yes],
      [AC_MSG_ERROR([Check >= 0.11 not found (install 'check'), or configure with --disable-tests])])
  ])
  AM_CONDITIONAL([VT_HAVE_CHECK], [test "x$vt_have_check" = xyes])
])
