# VT_BACKEND(NAME, DIR, [BUILT-TEST = true], [SEARCHED = yes])
# ----------------------------------------------------------
# Registers one backend folder. Each backend's DIR/configure.m4 (m4_include'd
# by configure.ac) detects what the backend needs and then calls this macro,
# so the folder is the whole backend: its detection, its Makefile.am (which
# includes backends/plugin.am) and its sources. This macro
#   - configures DIR/Makefile and enters DIR in the build (VT_BACKEND_SUBDIRS,
#     every backend, built or not, so `make dist` carries every folder);
#   - when the shell test BUILT-TEST succeeds and SEARCHED is yes, adds
#     DIR/.libs to VT_BUILDTREE_PLUGIN_DIRS, the directories an uninstalled
#     libvt searches (core/Makefile.am passes it to registry.c);
#   - lists NAME in vt_backends_summary for configure's closing summary.
AC_DEFUN([VT_BACKEND], [
  AC_CONFIG_FILES([$2/Makefile])
  VT_BACKEND_SUBDIRS="${VT_BACKEND_SUBDIRS:+$VT_BACKEND_SUBDIRS }$2"
  AS_IF([m4_default([$3], [true])], [
    m4_if(m4_default([$4], [yes]), [yes], [
      dnl Kept as a make reference: core/Makefile expands $(abs_top_builddir).
      VT_BUILDTREE_PLUGIN_DIRS="${VT_BUILDTREE_PLUGIN_DIRS:+$VT_BUILDTREE_PLUGIN_DIRS:}\$(abs_top_builddir)/$2/.libs"
      vt_backends_summary="${vt_backends_summary:+$vt_backends_summary }$1"
    ], [
      vt_backends_summary="${vt_backends_summary:+$vt_backends_summary }$1 (built, not searched)"
    ])
  ])
  AC_SUBST([VT_BACKEND_SUBDIRS])
  AC_SUBST([VT_BUILDTREE_PLUGIN_DIRS])
])

# VT_PLUGIN_ABI_FROM_HEADER
# -------------------------
# The plugin ABI and vtable version, read from core/vt/vt_backend.h (the one
# place they are defined) into VT_PLUGIN_ABI and VT_IFACE_VERSION, which
# vt.pc exports (pkg-config --variable=plugin_abi vt, plugin_iface) so an
# out-of-tree backend can check the installed core before it builds.
AC_DEFUN([VT_PLUGIN_ABI_FROM_HEADER], [
  AC_MSG_CHECKING([for the plugin ABI in core/vt/vt_backend.h])
  vt_backend_h="$srcdir/core/vt/vt_backend.h"
  VT_PLUGIN_ABI=`sed -n 's/^@%:@define VT_PLUGIN_ABI  *\([[0-9]][[0-9]]*\)u*[[ 	]]*$/\1/p' "$vt_backend_h"`
  VT_IFACE_VERSION=`sed -n 's/^@%:@define VT_IFACE_VERSION  *\([[0-9]][[0-9]]*\)u*[[ 	]]*$/\1/p' "$vt_backend_h"`
  AS_IF([test -z "$VT_PLUGIN_ABI" || test -z "$VT_IFACE_VERSION"],
    [AC_MSG_ERROR([$vt_backend_h: no '@%:@define VT_PLUGIN_ABI <n>u' or '@%:@define VT_IFACE_VERSION <n>u' line])])
  AC_MSG_RESULT([ABI $VT_PLUGIN_ABI, vtable version $VT_IFACE_VERSION])
  AC_SUBST([VT_PLUGIN_ABI])
  AC_SUBST([VT_IFACE_VERSION])
])
