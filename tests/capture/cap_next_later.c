/* cap_next_later.c: libcap_next_later.so, loaded after libcap_next.so: the
 * definitions RTLD_NEXT from libcap_next.so must find.  See cap_next.c. */
const char *cap_which(void);
int cap_later_only(void);

__attribute__((visibility("default"))) const char *cap_which(void)
{
    return "later";
}

__attribute__((visibility("default"))) int cap_later_only(void)
{
    return 42;
}
