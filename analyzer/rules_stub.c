/* rules_stub.c: TEMPORARY stand-in for analyzer/rules/ (issue 5, written on the
 * rules branch).  DELETE THIS FILE AT MERGE, with its line in analyzer/meson.build.
 *
 * Every definition is weak so that, should both land at once, the real
 * rules win at link time instead of clashing.  No rules: a report from this
 * branch alone has no findings; thresholds keep the contract's defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_report.h"

/* One zeroed element because C has no empty arrays; xp_nrules says 0. */
__attribute__((weak)) const struct xp_rule xp_rules[1] = {{0}};
__attribute__((weak)) const size_t xp_nrules = 0;

__attribute__((weak)) void xp_thresholds_default(struct xp_thresholds *t)
{
    *t = (struct xp_thresholds){
        .sync_in_loop_min_count = 10,
        .redundant_min_repeats = 3,
        .small_copy_max_bytes = 4096,
        .small_copies_min_count = 100,
        .low_bandwidth_fraction = 0.25,
        .low_bandwidth_min_bytes = 1u << 20,
        .leak_growing_fraction = 0.5,
        .fragmentation_min_ratio = 0.5,
        .fragmentation_min_free = 64u << 20,
    };
}

__attribute__((weak)) int xp_thresholds_set(struct xp_thresholds *t, const char *assignment,
                                            char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment || !eq[1]) {
        snprintf(err, errlen, "'%s': expected RULE.KEY=VALUE", assignment);
        return -1;
    }
    char *end = NULL;
    double v = strtod(eq + 1, &end);
    if (*end != '\0' || v < 0) {
        snprintf(err, errlen, "'%s': the value is not a non-negative number", assignment);
        return -1;
    }
    size_t n = (size_t)(eq - assignment);
#define XP_KEY(name, field, type)                                                  \
    if (n == strlen(name) && strncmp(assignment, name, n) == 0) {                   \
        t->field = (type)v;                                                         \
        return 0;                                                                   \
    }
    XP_KEY("sync-in-loop.min_count", sync_in_loop_min_count, uint64_t)
    XP_KEY("redundant-upload.min_repeats", redundant_min_repeats, uint64_t)
    XP_KEY("small-copies.max_bytes", small_copy_max_bytes, uint64_t)
    XP_KEY("small-copies.min_count", small_copies_min_count, uint64_t)
    XP_KEY("low-bandwidth.fraction", low_bandwidth_fraction, double)
    XP_KEY("low-bandwidth.min_bytes", low_bandwidth_min_bytes, uint64_t)
    XP_KEY("leak.growing_fraction", leak_growing_fraction, double)
    XP_KEY("fragmentation.min_ratio", fragmentation_min_ratio, double)
    XP_KEY("fragmentation.min_free", fragmentation_min_free, uint64_t)
#undef XP_KEY
    snprintf(err, errlen, "'%.*s': no such rule setting", (int)n, assignment);
    return -1;
}
