/* xpsim_log.h: the simulator's only output, and only with XFERPROF_SIM_DEBUG. */
#ifndef XPSIM_LOG_H
#define XPSIM_LOG_H

#include "xpsim_config.h"

void xpsim_log_write(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define xpsim_debug(...)                                                       \
    do {                                                                       \
        if (xpsim_config_get()->debug)                                         \
            xpsim_log_write(__VA_ARGS__);                                      \
    } while (0)

#endif
