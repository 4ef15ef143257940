/* xpsim_log.c: writes the simulator's debug log to stderr in one write(2) per line. */
#include "xpsim_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void xpsim_log_write(const char *fmt, ...)
{
    /* One write per line so lines from concurrent threads do not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "xpsim[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
