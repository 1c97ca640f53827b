# VT_CHECK_LTDL
# -------------
# vt loads its backends with the system libltdl (ltdl.h, -lltdl); the
# bundled copy is never used. Sets and substitutes LTDL_LIBS.
AC_DEFUN([VT_CHECK_LTDL], [
  AC_CHECK_HEADER([ltdl.h], [],
    [AC_MSG_ERROR([ltdl.h not found: install libltdl-dev (Debian) or libtool-ltdl-devel])])
  vt_save_LIBS=$LIBS
  AC_CHECK_LIB([ltdl], [lt_dlopenadvise], [LTDL_LIBS="-lltdl"],
    [AC_MSG_ERROR([libltdl with lt_dlopenadvise not found: install libltdl-dev])])
  LIBS=$vt_save_LIBS
  AC_SUBST([LTDL_LIBS])
])
