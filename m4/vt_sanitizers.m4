# VT_SANITIZERS
# -------------
# --enable-sanitizers[=address|thread]: build everything (libvt, plugins,
# tools, tests) with AddressSanitizer + UndefinedBehaviorSanitizer (leak
# checking on; the default) or ThreadSanitizer. Any report fails the run.
AC_DEFUN([VT_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers@<:@=address|thread@:>@],
      [instrument the build: address (ASan+UBSan+LSan, default) or thread (TSan)])],
    [vt_san=$enableval], [vt_san=no])
  case "$vt_san" in
    no) VT_SAN_FLAGS= ;;
    yes|address) vt_san=address
      VT_SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g" ;;
    thread) VT_SAN_FLAGS="-fsanitize=thread -fno-omit-frame-pointer -g" ;;
    *) AC_MSG_ERROR([--enable-sanitizers takes address or thread, not '$vt_san']) ;;
  esac
  AS_IF([test -n "$VT_SAN_FLAGS"], [
    vt_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS $VT_SAN_FLAGS"
    vt_save_LDFLAGS=$LDFLAGS
    LDFLAGS="$LDFLAGS $VT_SAN_FLAGS"
    AC_MSG_CHECKING([whether $CC can build with $VT_SAN_FLAGS])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[]], [[return 0;]])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no]); AC_MSG_ERROR([$CC cannot build with $VT_SAN_FLAGS])])
    CFLAGS=$vt_save_CFLAGS
    LDFLAGS="$vt_save_LDFLAGS $VT_SAN_FLAGS"
    VT_CFLAGS="$VT_CFLAGS $VT_SAN_FLAGS"
  ])
  vt_sanitizers=$vt_san
  AC_SUBST([VT_SAN_FLAGS])
  AM_CONDITIONAL([VT_SANITIZE], [test "x$vt_san" != xno])
])
