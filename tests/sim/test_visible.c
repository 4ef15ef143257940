/* Physical devices behind ordinals: stable UUIDs, CUDA_VISIBLE_DEVICES by index and UUID, PCI ids that follow the device (run with XFERPROF_SIM_DEVICES=4). */
#include "xpt_check.h"

#include <cuda.h>
#include <unistd.h>

#define PHYSICAL 4

/* What one process saw: per ordinal, the UUID as nvidia-smi shows it and the
 * PCI bus.  count -1: cudaGetDeviceCount failed with `error`. */
struct seen {
    int count, error;
    char uuid[PHYSICAL][48];
    int bus[PHYSICAL];
};

static void uuid_text(const unsigned char *u, char *out, size_t len)
{
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
}

typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);

/* The driver's cuDeviceGetUuid_v2, from the libcuda.so.1 the runtime loaded. */
static uuid_fn get_uuid(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    CHECK(h != NULL);
    void *sym = dlsym(h, "cuDeviceGetUuid_v2");
    CHECK(sym != NULL);
    uuid_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

/* The devices this process sees, printed one per line for a parent. */
static int child(void)
{
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
        printf("error %d\n", (int)rc);
        return 0;
    }
    printf("count %d\n", count);
    for (int dev = 0; dev < count; dev++) {
        struct cudaDeviceProp prop;
        CHECK_OK(cudaGetDeviceProperties(&prop, dev));
        char text[48], bus[32];
        uuid_text((const unsigned char *)prop.uuid.bytes, text, sizeof text);
        CHECK_OK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
        /* The driver's UUID and the runtime's properties agree. */
        CUuuid du;
        CHECK_EQ(get_uuid()(&du, dev), CUDA_SUCCESS);
        CHECK(memcmp(du.bytes, prop.uuid.bytes, sizeof du.bytes) == 0);
        unsigned bus_no = 0;
        CHECK(sscanf(bus, "0000:%x:00.0", &bus_no) == 1);
        CHECK_EQ(bus_no, prop.pciBusID);
        printf("dev %s %d\n", text, prop.pciBusID);
    }
    return 0;
}

/* Runs this program as a child with CUDA_VISIBLE_DEVICES set to `value`
 * (NULL: unset) and reads what it saw. */
static struct seen run_child(const char *self, const char *value)
{
    struct seen s;
    memset(&s, 0, sizeof s);
    s.count = -1;
    if (value)
        setenv("CUDA_VISIBLE_DEVICES", value, 1);
    else
        unsetenv("CUDA_VISIBLE_DEVICES");
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "'%s' child", self);
    FILE *f = popen(cmd, "r");
    CHECK(f != NULL);
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "count %d", &s.count) == 1 || sscanf(line, "error %d", &s.error) == 1)
            continue;
        CHECK_MSG(n < PHYSICAL, "more devices than exist: %s", line);
        CHECK(sscanf(line, "dev %47s %d", s.uuid[n], &s.bus[n]) == 2);
        n++;
    }
    CHECK_EQ(pclose(f), 0);
    CHECK_MSG(s.count < 0 || n == s.count, "CUDA_VISIBLE_DEVICES=%s: %d devices listed of %d",
              value ? value : "(unset)", n, s.count);
    unsetenv("CUDA_VISIBLE_DEVICES");
    return s;
}

/* `s` shows exactly the physical devices `want` (n of them) of `all`. */
static void expect(const char *value, const struct seen *s, const struct seen *all, const int *want,
                   int n)
{
    CHECK_MSG(s->count == n, "CUDA_VISIBLE_DEVICES=%s: %d devices, expected %d", value, s->count, n);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(strcmp(s->uuid[i], all->uuid[want[i]]) == 0,
                  "CUDA_VISIBLE_DEVICES=%s: ordinal %d is %s, expected physical %d %s", value, i,
                  s->uuid[i], want[i], all->uuid[want[i]]);
        CHECK_EQ(s->bus[i], all->bus[want[i]]);
    }
}

static void expect_none(const char *value, const struct seen *s)
{
    CHECK_MSG(s->count == -1 && s->error == cudaErrorNoDevice,
              "CUDA_VISIBLE_DEVICES='%s': count %d error %d, expected cudaErrorNoDevice", value,
              s->count, s->error);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len] = '\0';

    /* Unset: every device, each with its own well-formed UUID and bus. */
    struct seen all = run_child(self, NULL);
    CHECK_EQ(all.count, PHYSICAL);
    for (int i = 0; i < PHYSICAL; i++) {
        CHECK_MSG(strlen(all.uuid[i]) == 40 && all.uuid[i][12] == '-' && all.uuid[i][17] == '-' &&
                      all.uuid[i][22] == '-' && all.uuid[i][27] == '-',
                  "malformed UUID %s", all.uuid[i]);
        for (int j = 0; j < i; j++) {
            CHECK_MSG(strcmp(all.uuid[i], all.uuid[j]) != 0, "devices %d and %d share %s", i, j,
                      all.uuid[i]);
            CHECK(all.bus[i] != all.bus[j]);
        }
    }
    /* Stable: another process, another start, the same UUIDs. */
    struct seen again = run_child(self, NULL);
    static const int identity[PHYSICAL] = {0, 1, 2, 3};
    expect("(unset, again)", &again, &all, identity, PHYSICAL);

    static const int two_one[] = {2, 1};
    expect("2,1", (struct seen[]){run_child(self, "2,1")}, &all, two_one, 2);
    /* NVIDIA's example: devices before the invalid -1 only. */
    static const int zero_two[] = {0, 2};
    expect("0,2,-1,1", (struct seen[]){run_child(self, "0,2,-1,1")}, &all, zero_two, 2);
    static const int three[] = {3};
    expect("3", (struct seen[]){run_child(self, "3")}, &all, three, 1);
    expect("3,9,0", (struct seen[]){run_child(self, "3,9,0")}, &all, three, 1);

    /* By UUID, whole or as a prefix, mixed with indices. */
    char value[256];
    snprintf(value, sizeof value, "%s,0", all.uuid[3]);
    static const int three_zero[] = {3, 0};
    expect(value, (struct seen[]){run_child(self, value)}, &all, three_zero, 2);
    snprintf(value, sizeof value, "1,%.12s", all.uuid[2]);
    static const int one_two[] = {1, 2};
    expect(value, (struct seen[]){run_child(self, value)}, &all, one_two, 2);
    /* "GPU-" alone names every device: ambiguous, so invalid. */
    static const int one[] = {1};
    expect("1,GPU-", (struct seen[]){run_child(self, "1,GPU-")}, &all, one, 1);
    expect("1,GPU-zz", (struct seen[]){run_child(self, "1,GPU-zz")}, &all, one, 1);

    /* Nothing visible: no device at all. */
    expect_none("", (struct seen[]){run_child(self, "")});
    expect_none("7", (struct seen[]){run_child(self, "7")});
    expect_none("-1,0", (struct seen[]){run_child(self, "-1,0")});
    expect_none("abc", (struct seen[]){run_child(self, "abc")});
    printf("ok\n");
    return 0;
}
