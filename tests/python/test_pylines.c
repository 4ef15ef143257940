/* test_pylines.c: xp_py_line against the interpreter's own answers (cases from pylines_cases.py on stdin). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_pylines.h"

int main(void)
{
    static char line[1 << 20];
    static uint8_t table[1 << 16];
    long cases = 0, offsets = 0, wrong = 0;
    while (fgets(line, sizeof line, stdin)) {
        int format = 0, first = 0;
        char *hex = NULL, *pairs = NULL, *save = NULL;
        char *tok = strtok_r(line, " \n", &save);
        if (!tok)
            continue;
        format = atoi(tok);
        first = atoi(strtok_r(NULL, " \n", &save));
        hex = strtok_r(NULL, " \n", &save);
        pairs = strtok_r(NULL, " \n", &save);
        size_t len = 0;
        for (const char *h = hex; h && *h && *h != '-' && len < sizeof table; h += 2) {
            unsigned b = 0;
            sscanf(h, "%2x", &b);
            table[len++] = (uint8_t)b;
        }
        cases++;
        for (char *s2 = NULL, *p = strtok_r(pairs, ",", &s2); p; p = strtok_r(NULL, ",", &s2)) {
            int off = 0, want = 0;
            if (sscanf(p, "%d:%d", &off, &want) != 2)
                continue;
            offsets++;
            int got = xp_py_line(format, table, len, first, off);
            if (got != want && wrong++ < 20)
                fprintf(stderr, "format %d first line %d offset %d: got %d, interpreter says %d\n",
                        format, first, off, got, want);
        }
    }
    printf("%ld code objects, %ld offsets, %ld wrong\n", cases, offsets, wrong);
    return cases > 0 && offsets > 0 && wrong == 0 ? 0 : 1;
}
