/* xp_thresholds.c: the rules' default thresholds, and "rule.key=value" settings (--set). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xp_report.h"

#define XP_MIB (UINT64_C(1) << 20)

/* The defaults are argued for in docs/findings.md. */
void xp_thresholds_default(struct xp_thresholds *t)
{
    *t = (struct xp_thresholds){
        .sync_in_loop_min_count = 10,
        .sync_in_loop_sparse_every = 4,
        .sync_in_loop_result_min_bytes = 4096,
        .redundant_min_repeats = 3,
        .small_copy_max_bytes = 4096,
        .small_copies_min_count = 100,
        .low_bandwidth_fraction = 0.25,
        .low_bandwidth_min_bytes = XP_MIB,
        .low_bandwidth_min_count = 3,
        .low_bandwidth_min_share = 0.02,
        .small_copies_min_share = 0.01,
        .small_copy_fixed_ns = 2000,
        .leak_growing_fraction = 0.5,
        .fragmentation_min_ratio = 0.5,
        .fragmentation_min_free = 32 * XP_MIB,
        .leak_min_count = 3,
        .alloc_churn_min_count = 20,
    };
}

/* One setting: where it lives in struct xp_thresholds and what it accepts. */
struct xp_setting {
    const char *rule, *key;
    size_t offset;
    bool real;              /* double, else uint64_t */
    double min, max;        /* accepted range (inclusive) */
};

#define XP_INT(rule, key, field, lo) {rule, key, offsetof(struct xp_thresholds, field), false, lo, 0}
#define XP_REAL(rule, key, field, lo, hi) {rule, key, offsetof(struct xp_thresholds, field), true, lo, hi}

static const struct xp_setting xp_settings[] = {
    XP_INT("sync-in-loop", "min_count", sync_in_loop_min_count, 1),
    XP_INT("sync-in-loop", "sparse_every", sync_in_loop_sparse_every, 2),
    XP_INT("sync-in-loop", "result_min_bytes", sync_in_loop_result_min_bytes, 0),
    XP_INT("redundant-upload", "min_repeats", redundant_min_repeats, 2),
    XP_INT("small-copies", "max_bytes", small_copy_max_bytes, 0),
    XP_INT("small-copies", "min_count", small_copies_min_count, 1),
    XP_REAL("low-bandwidth", "fraction", low_bandwidth_fraction, 0, 1),
    XP_INT("low-bandwidth", "min_bytes", low_bandwidth_min_bytes, 0),
    XP_INT("low-bandwidth", "min_count", low_bandwidth_min_count, 1),
    XP_REAL("low-bandwidth", "min_share", low_bandwidth_min_share, 0, 1),
    XP_REAL("small-copies", "min_share", small_copies_min_share, 0, 1),
    XP_INT("small-copies", "fixed_ns", small_copy_fixed_ns, 0),
    XP_INT("leak", "min_count", leak_min_count, 1),
    XP_REAL("leak", "growing_fraction", leak_growing_fraction, 0, 1),
    XP_INT("alloc-churn", "min_count", alloc_churn_min_count, 2),
    XP_REAL("fragmentation", "min_ratio", fragmentation_min_ratio, 0, 1),
    XP_INT("fragmentation", "min_free", fragmentation_min_free, 0),
};
#define XP_NSETTINGS (sizeof xp_settings / sizeof xp_settings[0])

static int xp_set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int xp_set_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A whole number, with an optional binary unit (K, M, G, T, as in 64M or
 * 64MiB): byte thresholds are easier to give that way. */
static int xp_parse_count(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end) {
        const char *units = "KMGT", *u = strchr(units, end[0] & ~0x20);
        if (!u)
            return -1;
        shift = 10u * (unsigned)(u - units + 1);
        end++;
        if (*end && strcasecmp(end, "iB") != 0 && strcasecmp(end, "B") != 0)
            return -1;
    }
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int xp_parse_real(const char *s, double *out)
{
    if (!*s || *s == ' ')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* v == v refuses NaN; the range check below refuses infinities. */
    if (errno || end == s || *end || v != v)
        return -1;
    *out = v;
    return 0;
}

static void xp_list_keys(const char *rule, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < XP_NSETTINGS && used < len; i++)
        if (!rule || strcmp(xp_settings[i].rule, rule) == 0) {
            int n = snprintf(buf + used, len - used, "%s%s%s%s", used ? ", " : "",
                             rule ? "" : xp_settings[i].rule, rule ? "" : ".", xp_settings[i].key);
            if (n < 0)
                break;
            used += (size_t)n;
        }
}

int xp_thresholds_set(struct xp_thresholds *t, const char *assignment, char *err, size_t errlen)
{
    char keys[512];
    const char *eq = assignment ? strchr(assignment, '=') : NULL;
    const char *dot = assignment ? strchr(assignment, '.') : NULL;
    if (!eq || !dot || dot > eq || dot == assignment || dot + 1 == eq)
        return xp_set_error(err, errlen, "expected RULE.KEY=VALUE, got '%s'", assignment ? assignment : "");
    int rule_len = (int)(dot - assignment), key_len = (int)(eq - dot - 1);
    const char *value = eq + 1;
    bool rule_known = false;
    for (size_t i = 0; i < XP_NSETTINGS; i++) {
        const struct xp_setting *s = &xp_settings[i];
        if (strncmp(s->rule, assignment, (size_t)rule_len) != 0 || s->rule[rule_len])
            continue;
        rule_known = true;
        if (strncmp(s->key, dot + 1, (size_t)key_len) != 0 || s->key[key_len])
            continue;
        char *field = (char *)t + s->offset;
        if (s->real) {
            double v;
            if (xp_parse_real(value, &v) != 0 || v < s->min || v > s->max)
                return xp_set_error(err, errlen, "%s.%s: '%s' is not a number from %g to %g", s->rule,
                                    s->key, value, s->min, s->max);
            memcpy(field, &v, sizeof v);
        } else {
            uint64_t v;
            if (xp_parse_count(value, &v) != 0 || (double)v < s->min)
                return xp_set_error(err, errlen, "%s.%s: '%s' is not a whole number of at least %.0f",
                                    s->rule, s->key, value, s->min);
            memcpy(field, &v, sizeof v);
        }
        return 0;
    }
    if (rule_known) {
        char rule[64];
        snprintf(rule, sizeof rule, "%.*s", rule_len, assignment);
        xp_list_keys(rule, keys, sizeof keys);
        return xp_set_error(err, errlen, "rule %s has no setting '%.*s' (it has: %s)", rule, key_len,
                            dot + 1, keys);
    }
    for (size_t i = 0; i < xp_nrules; i++)
        if (strncmp(xp_rules[i].id, assignment, (size_t)rule_len) == 0 && !xp_rules[i].id[rule_len])
            return xp_set_error(err, errlen, "rule %s has no settings", xp_rules[i].id);
    xp_list_keys(NULL, keys, sizeof keys);
    return xp_set_error(err, errlen, "unknown rule '%.*s' (settings: %s)", rule_len, assignment, keys);
}
