/* xp_rules.h: the rules' entry points, gathered into xp_rules[] by xp_rules.c. */
#ifndef XP_RULES_H
#define XP_RULES_H

#include "xp_report.h"

void xp_rule_async_pageable(struct xp_report *r);
void xp_rule_sync_in_loop(struct xp_report *r);
void xp_rule_redundant_upload(struct xp_report *r);
void xp_rule_reupload_fresh(struct xp_report *r);
void xp_rule_round_trip(struct xp_report *r);
void xp_rule_small_copies(struct xp_report *r);
void xp_rule_low_bandwidth(struct xp_report *r);
void xp_rule_leak(struct xp_report *r);
void xp_rule_alloc_churn(struct xp_report *r);
void xp_rule_invalid_free(struct xp_report *r);
void xp_rule_fragmentation(struct xp_report *r);
void xp_rule_oom(struct xp_report *r);
void xp_rule_device_placement(struct xp_report *r);

#endif
