/* xp_locate.h: finding the preload library and the simulator next to the running xferprof. */
#ifndef XP_LOCATE_H
#define XP_LOCATE_H

#include <stddef.h>

/* The absolute path of libxferprof.so: $XFERPROF_PRELOAD_LIB if set, else
 * the first that exists of the build-tree and installed locations relative
 * to the running executable.  Returns 0, or -1 with a one-line reason in err
 * naming the places looked in. */
int xp_locate_preload(char *out, size_t outlen, char *err, size_t errlen);

/* The absolute path of the folder holding the simulator's libcudart.so.13
 * and libcuda.so.1: $XFERPROF_SIM_DIR if set, else the build-tree or
 * installed location.  Returns 0, or -1 with a one-line reason in err. */
int xp_locate_sim_dir(char *out, size_t outlen, char *err, size_t errlen);

#endif
