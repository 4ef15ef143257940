/* xpsim_devices.h: the simulated machine's physical GPUs and the ones CUDA_VISIBLE_DEVICES shows. */
#ifndef XPSIM_DEVICES_H
#define XPSIM_DEVICES_H

#include <stddef.h>

#include "xpsim_config.h"

#define XPSIM_UUID_BYTES 16
/* "GPU-" and 8-4-4-4-12 hex digits, as nvidia-smi -L shows a GPU's UUID. */
#define XPSIM_UUID_TEXT sizeof "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"

/* The UUID of physical device `physical` of machine `hostname`: the same in
 * every process and every run on that machine, different per device. */
void xpsim_device_uuid(int physical, const char *hostname, unsigned char out[XPSIM_UUID_BYTES]);

/* out: "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6". */
void xpsim_uuid_format(const unsigned char uuid[XPSIM_UUID_BYTES], char out[XPSIM_UUID_TEXT]);

/* The physical devices a process sees, in ordinal order, from the value of
 * CUDA_VISIBLE_DEVICES (NULL: unset) on a machine of `physical_count`
 * devices named `hostname`.  Fills out[0..n-1] and returns n. */
int xpsim_visible_parse(const char *value, int physical_count, const char *hostname,
                        int out[XPSIM_MAX_DEVICES]);

#endif
