# VT_PLUGIN_LINK
# --------------
# Every plugin links libvt (plugins call vt_op_name, vt_dtype_get ...) and
# is linked with -Wl,-z,defs, so a plugin that uses a libvt symbol without
# linking libvt fails the build instead of failing to load from a host that
# opened libvt RTLD_LOCAL (Python ctypes). Substitutes VT_PLUGIN_LDFLAGS.
# The flag is probed with the build's own flags (a sanitizer runtime that
# is linked only into executables leaves shared objects with undefined
# __asan_* symbols: then the flag is dropped and configure says so).
AC_DEFUN([VT_PLUGIN_LINK], [
  AC_REQUIRE([VT_SANITIZERS])
  VT_PLUGIN_LDFLAGS=
  AC_MSG_CHECKING([whether plugins can be linked with -Wl,-z,defs])
  vt_save_CFLAGS=$CFLAGS
  vt_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS $VT_SAN_FLAGS -fPIC"
  LDFLAGS="$LDFLAGS -shared -Wl,-z,defs"
  dnl The flag must refuse an undefined symbol and accept a clean object.
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[extern int vt_conftest_undefined(void);]],
                                  [[return vt_conftest_undefined();]])],
    [vt_zdefs=ignored],
    [AC_LINK_IFELSE([AC_LANG_PROGRAM([[int vt_conftest_defined(int x);
                                       int vt_conftest_defined(int x) { return x + 1; }]],
                                     [[return vt_conftest_defined(0);]])],
       [vt_zdefs=yes], [vt_zdefs=no])])
  CFLAGS=$vt_save_CFLAGS
  LDFLAGS=$vt_save_LDFLAGS
  AS_CASE([$vt_zdefs],
    [yes], [VT_PLUGIN_LDFLAGS="-Wl,-z,defs"; vt_plugin_link_summary="-Wl,-z,defs (every plugin links libvt)"],
    [ignored], [vt_plugin_link_summary="no -z defs (the linker accepts undefined symbols with it)"],
    [vt_plugin_link_summary="no -z defs (a clean shared object fails with it: $VT_SAN_FLAGS)"])
  AC_MSG_RESULT([$vt_zdefs])
  AC_SUBST([VT_PLUGIN_LDFLAGS])
])
