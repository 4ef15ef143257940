/* xpsim_log.h: the simulator's output: its debug log (XFERPROF_SIM_DEBUG), and what it cannot simulate. */
#ifndef XPSIM_LOG_H
#define XPSIM_LOG_H

#include "xpsim_config.h"

/* One line on stderr, always: the debug log below, and the few messages that
 * name what the simulator cannot do for a program that needs it. */
void xpsim_log_write(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define xpsim_debug(...)                                                       \
    do {                                                                       \
        if (xpsim_config_get()->debug)                                         \
            xpsim_log_write(__VA_ARGS__);                                      \
    } while (0)

#endif
