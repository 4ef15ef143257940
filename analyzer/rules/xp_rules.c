/* xp_rules.c: the table of rules, in the order the report runs them.
 *
 * The order matters where rules judge the same copies: a rule that reports
 * a copy claims it (xp_claim) and the rules after it leave it out, so the
 * more telling diagnosis runs first: "these bytes need not be sent at all"
 * (redundant-upload, reupload-fresh, round-trip) before "this copy blocks"
 * (sync-in-loop, async-pageable), before "these copies are small" and "this
 * copy was slow". */
#include "xp_rules.h"

const struct xp_rule xp_rules[] = {
    {"redundant-upload", xp_rule_redundant_upload, "the same bytes uploaded again to no purpose"},
    {"reupload-fresh", xp_rule_reupload_fresh, "the same bytes uploaded again into a newly allocated buffer"},
    {"round-trip", xp_rule_round_trip, "data copied to the host and back up unchanged"},
    {"sync-in-loop", xp_rule_sync_in_loop, "a call site that issues many blocking copies"},
    {"async-pageable", xp_rule_async_pageable,
     "async copies from pageable host memory, which hold the caller while the runtime stages them"},
    {"small-copies", xp_rule_small_copies, "many small copies, each paying a copy's fixed cost"},
    {"low-bandwidth", xp_rule_low_bandwidth, "large blocking copies far slower than the run's usual bandwidth"},
    {"leak", xp_rule_leak, "allocations still live at exit, growing or held"},
    {"alloc-churn", xp_rule_alloc_churn, "memory allocated and freed again every iteration from one site"},
    {"invalid-free", xp_rule_invalid_free, "frees of pointers that were not live allocations, and failed frees"},
    {"fragmentation", xp_rule_fragmentation, "device memory free only in holes between live allocations"},
    {"oom", xp_rule_oom, "allocations that failed for lack of device memory"},
    {"device-placement", xp_rule_device_placement, "ranks of one job that share a GPU or use another than their LOCAL_RANK's"},
};
const size_t xp_nrules = sizeof xp_rules / sizeof xp_rules[0];
