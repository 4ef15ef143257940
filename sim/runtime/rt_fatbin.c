/* rt_fatbin.c: initial values of module variables, read from a fatbin's cubins. */
/* nvcc 13 gives a __device__/__constant__ variable's host shadow no
 * initializer (`static int v[16];`) and a __managed__ one only a NULL pointer:
 * the initial bytes exist only in the device image, which the real driver
 * copies to the device when it loads the module.  The simulated device
 * executes no code, but a program that reads such a variable back with
 * cudaMemcpyFromSymbol must see its initializer. */
#include "rt_internal.h"

#include <elf.h>
#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u

/* The fatbinary container (what __fatBinC_Wrapper_t::data points to): a
 * 16-byte header, then entries, each a header (whose size it gives) and a
 * payload: a PTX text or an ELF cubin, possibly compressed. */
typedef struct fatbin_header {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint64_t entries_size;
} fatbin_header;

typedef struct fatbin_entry {
    uint16_t kind;               /* 1 PTX, 2 ELF */
    uint16_t version;
    uint32_t header_size;
    uint64_t payload_size;
} fatbin_entry;

enum { FATBIN_KIND_ELF = 2 };

/* Looks name up in one ELF64 image of size bytes. */
static bool elf_var_init(const unsigned char *elf, uint64_t size, const char *name,
                         size_t var_size, const void **out_bytes)
{
    Elf64_Ehdr eh;
    if (size < sizeof eh)
        return false;
    memcpy(&eh, elf, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
        (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
        return false;
    const unsigned char *shdrs = elf + eh.e_shoff;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr symtab;
        memcpy(&symtab, shdrs + i * sizeof symtab, sizeof symtab);
        if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= eh.e_shnum ||
            symtab.sh_entsize != sizeof(Elf64_Sym) || symtab.sh_offset > size ||
            symtab.sh_size > size - symtab.sh_offset)
            continue;
        Elf64_Shdr strtab;
        memcpy(&strtab, shdrs + symtab.sh_link * sizeof strtab, sizeof strtab);
        if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset)
            continue;
        const char *strs = (const char *)elf + strtab.sh_offset;
        size_t count = symtab.sh_size / sizeof(Elf64_Sym);
        for (size_t j = 0; j < count; j++) {
            Elf64_Sym sym;
            memcpy(&sym, elf + symtab.sh_offset + j * sizeof sym, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_name >= strtab.sh_size ||
                sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh.e_shnum)
                continue;
            const char *sym_name = strs + sym.st_name;
            size_t room = strtab.sh_size - sym.st_name;
            if (strnlen(sym_name, room) == room || strcmp(sym_name, name) != 0)
                continue;
            if (sym.st_size != var_size)
                return false;
            Elf64_Shdr sec;
            memcpy(&sec, shdrs + sym.st_shndx * sizeof sec, sizeof sec);
            if (sec.sh_type == SHT_NOBITS) {
                *out_bytes = NULL;        /* zero-initialized */
                return true;
            }
            if (sym.st_value > sec.sh_size || var_size > sec.sh_size - sym.st_value ||
                sec.sh_offset > size || sec.sh_size > size - sec.sh_offset)
                return false;
            *out_bytes = elf + sec.sh_offset + sym.st_value;
            return true;
        }
    }
    return false;
}

bool xprt_fatbin_var_init(const void *fatbin, const char *name, size_t size,
                          const void **out_bytes)
{
    if (fatbin == NULL || name == NULL)
        return false;
    const unsigned char *base = fatbin;
    fatbin_header fh;
    memcpy(&fh, base, sizeof fh);
    if (fh.magic != FATBIN_MAGIC || fh.header_size < sizeof fh)
        return false;
    uint64_t pos = fh.header_size;
    uint64_t end = fh.header_size + fh.entries_size;
    while (pos + sizeof(fatbin_entry) <= end) {
        fatbin_entry fe;
        memcpy(&fe, base + pos, sizeof fe);
        if (fe.header_size < sizeof fe || fe.payload_size > end - pos - fe.header_size)
            break;
        const unsigned char *payload = base + pos + fe.header_size;
        /* A compressed payload does not start with the ELF magic; skip it
         * rather than decompress (the shadow's bytes are the fallback). */
        if (fe.kind == FATBIN_KIND_ELF && fe.payload_size >= SELFMAG &&
            memcmp(payload, ELFMAG, SELFMAG) == 0 &&
            elf_var_init(payload, fe.payload_size, name, size, out_bytes))
            return true;
        pos += fe.header_size + fe.payload_size;
    }
    return false;
}
