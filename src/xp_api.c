/* xp_api.c: names of the hooked entry points, by id. */
#include "xp_api.h"

#include <stddef.h>

static const struct {
    const char *name;
    int layer;
} apis[XP_API_COUNT] = {
    [XP_API_NONE] = {NULL, 0},
#define XP_API_ROW(name, layer) [XP_API_##name] = {#name, layer},
    XP_API_LIST(XP_API_ROW)
#undef XP_API_ROW
};

const char *xp_api_name(unsigned id)
{
    return id < XP_API_COUNT ? apis[id].name : NULL;
}

const char *xp_api_layer(unsigned id)
{
    if (id == XP_API_NONE || id >= XP_API_COUNT)
        return NULL;
    return apis[id].layer ? "driver" : "runtime";
}
