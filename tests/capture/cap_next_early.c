/* cap_next_early.c: libcap_next_early.so, loaded before libcap_next.so: its
 * cap_which() is the one a wrong RTLD_NEXT search (one that starts after
 * libxferprof instead of after the caller) finds.  See cap_next.c. */
const char *cap_which(void);
int cap_early_id(void);

__attribute__((visibility("default"))) const char *cap_which(void)
{
    return "early";
}

__attribute__((visibility("default"))) int cap_early_id(void)
{
    return 1;
}
