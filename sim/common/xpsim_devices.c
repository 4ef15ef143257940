/* xpsim_devices.c: the simulated machine's physical GPUs (a stable UUID each)
 * and which of them CUDA_VISIBLE_DEVICES lets a process see, in what order. */
#include "xpsim_devices.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Inlined, so that libcuda.so.1 needs no libxxhash.so beside it (a real
 * driver brings no such dependency either). */
#define XXH_INLINE_ALL
#include <xxhash.h>

void xpsim_device_uuid(int physical, const char *hostname, unsigned char out[XPSIM_UUID_BYTES])
{
    /* Derived, not random: every process on a machine must agree on which
     * GPU is which (that is what the profiler compares across ranks), and a
     * second run must find the same UUIDs, as it would on real hardware. */
    char key[320];
    int n = snprintf(key, sizeof key, "xferprof-sim-gpu/%s/%d", hostname ? hostname : "", physical);
    if (n < 0 || (size_t)n >= sizeof key)
        n = (int)strlen(key);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(key, (size_t)n));
    memcpy(out, c.digest, XPSIM_UUID_BYTES);
}

void xpsim_uuid_format(const unsigned char u[XPSIM_UUID_BYTES], char out[XPSIM_UUID_TEXT])
{
    snprintf(out, XPSIM_UUID_TEXT,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
}

/* The physical device an entry names, or -1 when it names none.  NVIDIA's
 * documented forms: an index as nvidia-smi numbers the GPUs, or a UUID as
 * nvidia-smi -L shows it, which may be abbreviated to a prefix ("GPU-8932f937")
 * as long as it names one GPU only.  MIG devices are not simulated. */
static int entry_device(const char *entry, size_t len, int physical_count, const char *hostname)
{
    if (len == 0)
        return -1;
    if (len > 4 && strncmp(entry, "GPU-", 4) == 0) {
        int found = -1;
        for (int i = 0; i < physical_count; i++) {
            unsigned char u[XPSIM_UUID_BYTES];
            char text[XPSIM_UUID_TEXT];
            xpsim_device_uuid(i, hostname, u);
            xpsim_uuid_format(u, text);
            if (len < sizeof text && strncasecmp(text, entry, len) == 0) {
                if (found >= 0)
                    return -1;   /* ambiguous: the prefix names two GPUs */
                found = i;
            }
        }
        return found;
    }
    int index = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)entry[i]))
            return -1;
        index = index * 10 + (entry[i] - '0');
        if (index >= physical_count)
            return -1;
    }
    return index;
}

int xpsim_visible_parse(const char *value, int physical_count, const char *hostname,
                        int out[XPSIM_MAX_DEVICES])
{
    if (physical_count > XPSIM_MAX_DEVICES)
        physical_count = XPSIM_MAX_DEVICES;
    if (value == NULL) {
        for (int i = 0; i < physical_count; i++)
            out[i] = i;
        return physical_count;
    }
    /* "If an invalid index is encountered, only devices with indices that
     * appear before the invalid index in the list are visible" (CUDA
     * Programming Guide, CUDA_VISIBLE_DEVICES); an empty value shows none.
     * A device named twice is taken as invalid the second time: one GPU is
     * never two ordinals (NVIDIA does not document this case). */
    int n = 0;
    const char *p = value;
    while (*p && n < physical_count) {
        size_t len = strcspn(p, ",");
        int dev = entry_device(p, len, physical_count, hostname);
        for (int i = 0; i < n && dev >= 0; i++)
            if (out[i] == dev)
                dev = -1;
        if (dev < 0)
            break;
        out[n++] = dev;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return n;
}
