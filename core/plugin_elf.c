/* plugin_elf.c - what a plugin file is, read from the file itself and
 * never by running it (SPEC 3: no plugin code runs before the ABI word is
 * read; a constructor runs at dlopen, so the word is read before dlopen).
 *
 * The file is hostile until proven otherwise: every offset, size and count
 * is checked against the file's size (overflow-checked) before it is used,
 * and every refusal names what is wrong and where.
 *
 * Steps: the ELF header (an ELF64 little-endian shared object for this
 * machine: x86-64 or aarch64; anything else refused by name), the section
 * headers, the dynamic symbol table (.dynsym and the string table its
 * sh_link names), the symbol vt_plugin_abi (a defined, global OBJECT of
 * exactly 4 bytes in an allocated, non-executable data section), and the
 * word itself at the section's file offset. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_internal.h"

#if defined(__x86_64__)
#define HOST_EM EM_X86_64
#elif defined(__aarch64__)
#define HOST_EM EM_AARCH64
#elif defined(__i386__)
#define HOST_EM EM_386
#elif defined(__powerpc64__)
#define HOST_EM EM_PPC64
#elif defined(__riscv)
#define HOST_EM EM_RISCV
#elif defined(__arm__)
#define HOST_EM EM_ARM
#else
#define HOST_EM EM_NONE
#endif

/* Tables larger than this are refused rather than read (a plugin's
 * .dynsym and .dynstr are kilobytes; a hostile header may claim gigabytes). */
#define ELF_TABLE_MAX (64u << 20)
/* More section headers than this are refused (SHN_LORESERVE is 0xff00). */
#define ELF_SHNUM_MAX 0x10000u

static const char *machine_name(unsigned m)
{
    switch (m) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_PPC64: return "ppc64";
    case EM_RISCV: return "riscv";
    case EM_ARM: return "arm";
    case EM_AMDGPU: return "amdgpu";
    }
    return "other";
}

/* Little-endian fields from a byte buffer (the reader takes ELFDATA2LSB
 * only, so no struct is cast over file bytes). */
static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* An open plugin file and its size. */
typedef struct elf_file {
    int fd;
    uint64_t size;
} elf_file;

/* True when [off, off + len) lies inside the file (overflow-checked). */
static bool in_file(const elf_file *f, uint64_t off, uint64_t len)
{
    return off <= f->size && len <= f->size - off;
}

/* Read exactly len bytes at off (caller checked in_file). NULL or reason. */
static char *read_at(const elf_file *f, void *buf, size_t len, uint64_t off, const char *what)
{
    size_t done = 0;
    while (done < len) {
        ssize_t got = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return vt_strdup_printf("cannot read %s at offset %llu: %s", what, (unsigned long long)off,
                                    strerror(errno));
        if (got == 0)
            return vt_strdup_printf("file ends inside %s (offset %llu, %zu bytes wanted)", what,
                                    (unsigned long long)off, len);
        done += (size_t)got;
    }
    return NULL;
}

/* Read a table of len bytes at off into a fresh buffer: bounds and the
 * size cap checked first. NULL or reason; *out owned by the caller. */
static char *read_table(const elf_file *f, uint64_t off, uint64_t len, const char *what, unsigned char **out)
{
    *out = NULL;
    if (!in_file(f, off, len))
        return vt_strdup_printf("%s (offset %llu, %llu bytes) lies outside the file (%llu bytes)", what,
                                (unsigned long long)off, (unsigned long long)len, (unsigned long long)f->size);
    if (len > ELF_TABLE_MAX)
        return vt_strdup_printf("%s is %llu bytes, more than the %u a plugin may have", what, (unsigned long long)len,
                                ELF_TABLE_MAX);
    unsigned char *buf = malloc(len ? (size_t)len : 1);
    if (!buf)
        return vt_strdup_printf("out of memory reading %s (%llu bytes)", what, (unsigned long long)len);
    char *bad = read_at(f, buf, (size_t)len, off, what);
    if (bad) {
        free(buf);
        return bad;
    }
    *out = buf;
    return NULL;
}

/* One section header, decoded. */
typedef struct elf_shdr {
    uint32_t name, type;
    uint64_t flags, addr, offset, size;
    uint32_t link;
    uint64_t entsize;
} elf_shdr;

static elf_shdr shdr_at(const unsigned char *sh)
{
    elf_shdr s;
    s.name = le32(sh + 0);
    s.type = le32(sh + 4);
    s.flags = le64(sh + 8);
    s.addr = le64(sh + 16);
    s.offset = le64(sh + 24);
    s.size = le64(sh + 32);
    s.link = le32(sh + 40);
    s.entsize = le64(sh + 56);
    return s;
}

/* The ELF identification and header checks: NULL when the file is an
 * ELF64 little-endian shared object for this machine. h holds got bytes. */
static char *header_problem(const unsigned char *h, size_t got)
{
    if (got < 4 || memcmp(h, ELFMAG, SELFMAG) != 0) {
        char hex[16] = "";
        for (size_t i = 0; i < got && i < 4; i++)
            snprintf(hex + 3 * i, sizeof hex - 3 * i, "%02x ", h[i]);
        if (hex[0])
            hex[strlen(hex) - 1] = '\0';
        return vt_strdup_printf("not an ELF file (first bytes: %s)", got ? hex : "none, empty file");
    }
    if (got < EI_NIDENT || (h[EI_CLASS] == ELFCLASS64 && got < sizeof(Elf64_Ehdr)) || got < sizeof(Elf32_Ehdr))
        return vt_strdup_printf("truncated ELF header (%zu bytes)", got);
    int want_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (h[EI_CLASS] != want_class)
        return vt_strdup_printf("wrong ELF class: %d-bit object, this process is %d-bit",
                                h[EI_CLASS] == ELFCLASS64 ? 64 : 32, (int)sizeof(void *) * 8);
    const uint16_t one = 1;
    unsigned want_data = *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
    if (h[EI_DATA] != want_data)
        return vt_strdup_printf("wrong byte order: ELF data encoding %u, this process %u", h[EI_DATA], want_data);
    /* e_type and e_machine sit at the same offsets in both classes. */
    uint16_t type = want_data == ELFDATA2LSB ? le16(h + 16) : (uint16_t)(h[16] << 8 | h[17]);
    uint16_t machine = want_data == ELFDATA2LSB ? le16(h + 18) : (uint16_t)(h[18] << 8 | h[19]);
    if (type != ET_DYN)
        return vt_strdup_printf("not a shared object (ELF type %u)", type);
    if (HOST_EM != EM_NONE && machine != HOST_EM)
        return vt_strdup_printf("wrong architecture: ELF machine %u (%s), this process is %s (%u)", machine,
                                machine_name(machine), machine_name(HOST_EM), HOST_EM);
    /* What the ABI reader itself takes. */
    if (h[EI_CLASS] != ELFCLASS64 || h[EI_DATA] != ELFDATA2LSB || (machine != EM_X86_64 && machine != EM_AARCH64))
        return vt_strdup_printf("ELF machine %u (%s, %s %s): the ABI word reader takes ELF64 little-endian "
                                "x86_64 and aarch64 objects only",
                                machine, machine_name(machine), h[EI_CLASS] == ELFCLASS64 ? "ELF64" : "ELF32",
                                h[EI_DATA] == ELFDATA2LSB ? "little-endian" : "big-endian");
    return NULL;
}

/* The section's name from .shstrtab for messages ("" when unknown). */
static void section_name(const unsigned char *shstr, uint64_t shstr_size, uint32_t off, char *out, size_t n)
{
    out[0] = '\0';
    if (!shstr || off >= shstr_size)
        return;
    size_t i = 0;
    for (; i + 1 < n && off + i < shstr_size && shstr[off + i]; i++) {
        unsigned char c = shstr[off + i];
        out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[i] = '\0';
}

static const char *symbol_type_name(unsigned t)
{
    switch (t) {
    case STT_NOTYPE: return "untyped (STT_NOTYPE)";
    case STT_OBJECT: return "data object (STT_OBJECT)";
    case STT_FUNC: return "function (STT_FUNC)";
    case STT_SECTION: return "section (STT_SECTION)";
    case STT_FILE: return "file (STT_FILE)";
    case STT_COMMON: return "common block (STT_COMMON)";
    case STT_TLS: return "thread-local object (STT_TLS)";
    case STT_GNU_IFUNC: return "indirect function (STT_GNU_IFUNC)";
    }
    return "symbol of an unknown type";
}

/* Find the ABI word in an open, header-checked file. */
static char *abi_from_sections(const elf_file *f, const unsigned char *eh, uint32_t *abi)
{
    uint64_t shoff = le64(eh + 40);
    uint16_t shentsize = le16(eh + 58);
    uint64_t shnum = le16(eh + 60);
    uint32_t shstrndx = le16(eh + 62);
    if (shoff == 0)
        return vt_strdup_printf("no section headers (e_shoff 0): the dynamic symbol table cannot be found");
    if (shentsize != sizeof(Elf64_Shdr))
        return vt_strdup_printf("section header size %u, ELF64 needs %zu", shentsize, sizeof(Elf64_Shdr));
    if (!in_file(f, shoff, sizeof(Elf64_Shdr)))
        return vt_strdup_printf("section headers at offset %llu lie outside the file (%llu bytes)",
                                (unsigned long long)shoff, (unsigned long long)f->size);
    if (shnum == 0 || shstrndx == SHN_XINDEX) { /* extended numbering: the counts live in section 0 */
        unsigned char s0[sizeof(Elf64_Shdr)];
        char *bad = read_at(f, s0, sizeof s0, shoff, "section header 0");
        if (bad)
            return bad;
        elf_shdr z = shdr_at(s0);
        if (shnum == 0)
            shnum = z.size;
        if (shstrndx == SHN_XINDEX)
            shstrndx = z.link;
    }
    if (shnum == 0 || shnum > ELF_SHNUM_MAX)
        return vt_strdup_printf("%llu section headers (a plugin has 1 to %u)", (unsigned long long)shnum,
                                ELF_SHNUM_MAX);
    unsigned char *sh = NULL;
    char *bad = read_table(f, shoff, shnum * sizeof(Elf64_Shdr), "the section header table", &sh);
    if (bad)
        return bad;

    /* Section names, for messages only: a bad .shstrtab is not fatal. */
    unsigned char *shstr = NULL;
    uint64_t shstr_size = 0;
    if (shstrndx < shnum) {
        elf_shdr s = shdr_at(sh + (size_t)shstrndx * sizeof(Elf64_Shdr));
        if (s.type == SHT_STRTAB && s.size <= 65536) {
            char *ignored = read_table(f, s.offset, s.size, ".shstrtab", &shstr);
            free(ignored);
            shstr_size = shstr ? s.size : 0;
        }
    }

    uint64_t dynsym = shnum;
    for (uint64_t i = 0; i < shnum; i++) {
        if (shdr_at(sh + i * sizeof(Elf64_Shdr)).type != SHT_DYNSYM)
            continue;
        if (dynsym != shnum) {
            bad = vt_strdup_printf("two dynamic symbol tables (sections %llu and %llu)", (unsigned long long)dynsym,
                                   (unsigned long long)i);
            goto out;
        }
        dynsym = i;
    }
    if (dynsym == shnum) {
        bad = vt_strdup_printf("missing symbol %s (the file has no dynamic symbol table)", VT_PLUGIN_ABI_SYMBOL);
        goto out;
    }
    elf_shdr ds = shdr_at(sh + dynsym * sizeof(Elf64_Shdr));
    if (ds.entsize != sizeof(Elf64_Sym) || ds.size % sizeof(Elf64_Sym) != 0) {
        bad = vt_strdup_printf(".dynsym (section %llu) has entries of %llu bytes and size %llu; ELF64 symbols are "
                               "%zu bytes",
                               (unsigned long long)dynsym, (unsigned long long)ds.entsize, (unsigned long long)ds.size,
                               sizeof(Elf64_Sym));
        goto out;
    }
    if (ds.link == 0 || ds.link >= shnum) {
        bad = vt_strdup_printf(".dynsym (section %llu) names string table section %u of %llu",
                               (unsigned long long)dynsym, ds.link, (unsigned long long)shnum);
        goto out;
    }
    elf_shdr ss = shdr_at(sh + (size_t)ds.link * sizeof(Elf64_Shdr));
    if (ss.type != SHT_STRTAB) {
        bad = vt_strdup_printf(".dynsym's string table (section %u) has type %u, not SHT_STRTAB", ds.link, ss.type);
        goto out;
    }
    unsigned char *syms = NULL, *strs = NULL;
    bad = read_table(f, ds.offset, ds.size, ".dynsym", &syms);
    if (!bad)
        bad = read_table(f, ss.offset, ss.size, ".dynstr", &strs);
    if (bad) {
        free(syms);
        goto out;
    }

    static const char want[] = VT_PLUGIN_ABI_SYMBOL; /* with its NUL */
    uint64_t n_syms = ds.size / sizeof(Elf64_Sym);
    const unsigned char *found = NULL, *undefined = NULL;
    for (uint64_t i = 1; i < n_syms && !found; i++) { /* entry 0 is the null symbol */
        const unsigned char *s = syms + i * sizeof(Elf64_Sym);
        uint32_t name = le32(s);
        if (name >= ss.size) {
            bad = vt_strdup_printf(".dynsym entry %llu names offset %u outside .dynstr (%llu bytes)",
                                   (unsigned long long)i, name, (unsigned long long)ss.size);
            break;
        }
        if (ss.size - name < sizeof want || memcmp(strs + name, want, sizeof want) != 0)
            continue;
        if (le16(s + 6) == SHN_UNDEF)
            undefined = s;
        else
            found = s;
    }
    if (!bad && !found)
        bad = undefined ? vt_strdup_printf("symbol %s is undefined in the plugin (a reference to another object's "
                                           "symbol, not the plugin's own word)",
                                           VT_PLUGIN_ABI_SYMBOL)
                        : vt_strdup_printf("missing symbol %s", VT_PLUGIN_ABI_SYMBOL);
    if (!bad) {
        unsigned char info = found[4];
        uint16_t shndx = le16(found + 6);
        uint64_t value = le64(found + 8), size = le64(found + 16);
        unsigned type = ELF64_ST_TYPE(info), bind = ELF64_ST_BIND(info);
        if (type != STT_OBJECT)
            bad = vt_strdup_printf("symbol %s is a %s, not the 4-byte data word; not called", VT_PLUGIN_ABI_SYMBOL,
                                   symbol_type_name(type));
        else if (bind != STB_GLOBAL)
            bad = vt_strdup_printf("symbol %s has binding %u, not global (STB_GLOBAL)", VT_PLUGIN_ABI_SYMBOL, bind);
        else if (size != 4)
            bad = vt_strdup_printf("symbol %s is %llu byte%s, the ABI word is 4 (uint32_t)", VT_PLUGIN_ABI_SYMBOL,
                                   (unsigned long long)size, size == 1 ? "" : "s");
        else if (shndx >= SHN_LORESERVE || shndx >= shnum)
            bad = vt_strdup_printf("symbol %s lies in no section of the file (section index %u of %llu)",
                                   VT_PLUGIN_ABI_SYMBOL, shndx, (unsigned long long)shnum);
        if (!bad) {
            elf_shdr ws = shdr_at(sh + (size_t)shndx * sizeof(Elf64_Shdr));
            char sname[64];
            section_name(shstr, shstr_size, ws.name, sname, sizeof sname);
            if (!(ws.flags & SHF_ALLOC) || (ws.flags & (SHF_EXECINSTR | SHF_TLS)) ||
                (ws.type != SHT_PROGBITS && ws.type != SHT_NOBITS))
                bad = vt_strdup_printf("symbol %s lies in section %u (%s), which is not a loaded data section "
                                       "(type %u, flags 0x%llx)",
                                       VT_PLUGIN_ABI_SYMBOL, shndx, sname[0] ? sname : "unnamed", ws.type,
                                       (unsigned long long)ws.flags);
            else if (value < ws.addr || value - ws.addr > ws.size || ws.size - (value - ws.addr) < 4)
                bad = vt_strdup_printf("symbol %s at address 0x%llx lies outside its section %u (%s, 0x%llx + %llu)",
                                       VT_PLUGIN_ABI_SYMBOL, (unsigned long long)value, shndx,
                                       sname[0] ? sname : "unnamed", (unsigned long long)ws.addr,
                                       (unsigned long long)ws.size);
            else if (ws.type == SHT_NOBITS)
                *abi = 0; /* zero-initialised (.bss) */
            else {
                uint64_t rel = value - ws.addr;
                uint64_t off = ws.offset <= f->size && rel <= f->size - ws.offset ? ws.offset + rel : UINT64_MAX;
                unsigned char word[4];
                if (!in_file(f, off, 4))
                    bad = vt_strdup_printf("symbol %s's word at file offset %llu (section %u, %s) lies outside the "
                                           "file (%llu bytes)",
                                           VT_PLUGIN_ABI_SYMBOL, (unsigned long long)off, shndx,
                                           sname[0] ? sname : "unnamed", (unsigned long long)f->size);
                else if (!(bad = read_at(f, word, 4, off, "the ABI word")))
                    *abi = le32(word);
            }
        }
    }
    free(syms);
    free(strs);
out:
    free(sh);
    free(shstr);
    return bad;
}

char *vt_plugin_elf_abi(const char *path, uint32_t *abi)
{
    *abi = 0;
    /* O_NONBLOCK: a FIFO or device given as a plugin must not block here. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return vt_strdup_printf("cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return vt_strdup_printf("cannot stat: %s", strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return vt_strdup_printf("not a regular file (mode %06o)", (unsigned)st.st_mode);
    }
    elf_file f = {fd, (uint64_t)st.st_size};
    unsigned char h[sizeof(Elf64_Ehdr)] = {0};
    size_t got = 0;
    while (got < sizeof h) {
        ssize_t r = pread(fd, h + got, sizeof h - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            close(fd);
            return vt_strdup_printf("cannot read: %s", strerror(err));
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    char *bad = header_problem(h, got);
    if (!bad)
        bad = abi_from_sections(&f, h, abi);
    close(fd);
    return bad;
}
