/* xp_driver_each.h: expands xp_driver_hooks.def once, every line as
 * XP_DRV_EACH(name, ...) whatever its shape, except the shapes the includer
 * defined itself (so the index, the table and the lookups need not list the
 * shapes again, and a new shape is added here alone).  Included for its
 * expansion, as often as needed: no include guard.  Leaves every shape
 * undefined. */
#ifndef XP_DRV_EACH
#error "define XP_DRV_EACH(name, ...) before including xp_driver_each.h"
#endif
#ifndef XP_COPY
#define XP_COPY XP_DRV_EACH
#endif
#ifndef XP_ARRAY_COPY
#define XP_ARRAY_COPY XP_DRV_EACH
#endif
#ifndef XP_COPY2D
#define XP_COPY2D XP_DRV_EACH
#endif
#ifndef XP_COPY3D
#define XP_COPY3D XP_DRV_EACH
#endif
#ifndef XP_ALLOC
#define XP_ALLOC XP_DRV_EACH
#endif
#ifndef XP_ALLOC_ON
#define XP_ALLOC_ON XP_DRV_EACH
#endif
#ifndef XP_REGISTER
#define XP_REGISTER XP_DRV_EACH
#endif
#ifndef XP_FREE
#define XP_FREE XP_DRV_EACH
#endif
#ifndef XP_FREE_SPAN
#define XP_FREE_SPAN XP_DRV_EACH
#endif
#ifndef XP_PREFETCH
#define XP_PREFETCH XP_DRV_EACH
#endif
#ifndef XP_SYNC
#define XP_SYNC XP_DRV_EACH
#endif
#ifndef XP_MEMSET
#define XP_MEMSET XP_DRV_EACH
#endif
#ifndef XP_LAUNCH
#define XP_LAUNCH XP_DRV_EACH
#endif
#ifndef XP_PROFILER
#define XP_PROFILER XP_DRV_EACH
#endif
#ifndef XP_PROCADDRESS
#define XP_PROCADDRESS XP_DRV_EACH
#endif
#ifndef XP_GRAPH
#define XP_GRAPH XP_DRV_EACH
#endif
#ifndef XP_GNODE_COPY3D
#define XP_GNODE_COPY3D XP_DRV_EACH
#endif
#ifndef XP_GNODE_MEMSET
#define XP_GNODE_MEMSET XP_DRV_EACH
#endif
#ifndef XP_CONTEXT
#define XP_CONTEXT XP_DRV_EACH
#endif
#ifndef XP_CONTEXT_DESTROY
#define XP_CONTEXT_DESTROY XP_DRV_EACH
#endif
#include "xp_driver_hooks.def"
#undef XP_COPY
#undef XP_ARRAY_COPY
#undef XP_COPY2D
#undef XP_COPY3D
#undef XP_ALLOC
#undef XP_ALLOC_ON
#undef XP_REGISTER
#undef XP_FREE
#undef XP_FREE_SPAN
#undef XP_PREFETCH
#undef XP_SYNC
#undef XP_MEMSET
#undef XP_LAUNCH
#undef XP_PROFILER
#undef XP_PROCADDRESS
#undef XP_GRAPH
#undef XP_GNODE_COPY3D
#undef XP_GNODE_MEMSET
#undef XP_CONTEXT
#undef XP_CONTEXT_DESTROY
#undef XP_DRV_EACH
