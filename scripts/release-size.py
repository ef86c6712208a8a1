#!/usr/bin/env python3
"""Check a release `livenote` binary before it ships: no debug sections, at most 25 MiB.

    python3 scripts/release-size.py target/release/livenote

Prints the size in MiB; exits 1 when the binary carries `.debug_*` sections (an ELF file; other
formats are checked for size only) or is larger than the limit. The section headers are read
here rather than with readelf, which a fresh machine may not have.
"""

import struct
import sys

LIMIT_MIB = 25


def elf_section_names(data: bytes) -> list[str] | None:
    """The section names of an ELF file, or None when `data` is not one."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return None
    is64 = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x3A)
        offset_field, size_field, word = 0x18, 0x20, "Q"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x2E)
        offset_field, size_field, word = 0x10, 0x14, "I"
    if shoff == 0 or shnum == 0 or shstrndx >= shnum:
        return []

    def header(i: int) -> tuple[int, int, int]:
        base = shoff + i * shentsize
        name, = struct.unpack_from(order + "I", data, base)
        off, = struct.unpack_from(order + word, data, base + offset_field)
        size, = struct.unpack_from(order + word, data, base + size_field)
        return name, off, size

    _, strtab_off, strtab_size = header(shstrndx)
    strtab = data[strtab_off : strtab_off + strtab_size]
    names = []
    for i in range(shnum):
        name_off = header(i)[0]
        end = strtab.find(b"\0", name_off)
        names.append(strtab[name_off : end if end >= 0 else len(strtab)].decode("ascii", "replace"))
    return names


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} BINARY", file=sys.stderr)
        return 2
    path = sys.argv[1]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"release-size: {e}", file=sys.stderr)
        return 2
    mib = len(data) / (1024 * 1024)
    print(f"release-size: {path}: {mib:.1f} MiB ({len(data)} bytes)")
    failed = False
    try:
        names = elf_section_names(data)
    except struct.error:
        print(f"release-size: {path}: truncated ELF section headers", file=sys.stderr)
        return 1
    if names is None:
        print(f"release-size: {path} is not an ELF file: only its size is checked")
    else:
        debug = sorted(n for n in names if n.startswith((".debug_", ".zdebug_")))
        if debug:
            print(f"release-size: {path} has debug sections: {', '.join(debug)}", file=sys.stderr)
            failed = True
    if mib > LIMIT_MIB:
        print(f"release-size: {path} is larger than {LIMIT_MIB} MiB", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
