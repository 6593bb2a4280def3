"""Checks on machine code read from files, before it is handed to the loader that maps it.

symengine's ``llvm_loading_func`` (a saved model's or the kernel cache's compiled kernels)
gives an ELF object file to LLVM's RuntimeDyld, which does not return errors: a malformed
object makes LLVM print "LLVM ERROR: ..." and abort the whole interpreter (exit status 134),
and an out-of-range relocation or symbol writes outside the mapped sections.  The SHA-256
of each blob catches accidental damage, not a file whose hash was recomputed after it was
changed, so :func:`check_object_code` parses the object in Python first and raises
:class:`~symbody.errors.ModelFileError` for anything RuntimeDyld would choke on:

* the ELF header: magic, 64-bit little-endian, version 1, a relocatable object (``ET_REL``)
  for this machine, header sizes as the format defines them;
* the section header table and every section inside the file, names inside the section
  name table, links and info fields pointing at sections of the right type;
* the symbol tables: names inside their string table (NUL-terminated), section indices
  valid, defined symbols inside their section, symbol types the loader handles (no
  thread-local storage), one function ``symengine_func`` in an executable section
  (the entry point symengine looks up); undefined symbols (``sin``, ``sincos``...)
  resolvable in this process (an unresolvable one is another "LLVM ERROR" abort);
* the relocation tables: entries inside the section they patch, symbol indices inside the
  symbol table, and (x86-64) relocation types RuntimeDyld implements.

What this cannot check is the instructions themselves: a changed byte of code is still
valid code (or an invalid instruction when run).  That is why the files are to be loaded
only from trusted sources (see :mod:`.persistence` and :mod:`.cache`).
"""

from __future__ import annotations

import ctypes
import functools
import platform
import struct
import sys

from ..errors import ModelFileError

__all__ = ["check_object_code", "check_shared_library"]

_ET_REL, _ET_DYN = 1, 3
#: e_machine of the platforms symengine's LLVM backend runs on
_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "ppc64le": 21, "s390x": 22,
             "riscv64": 243}
_SHT_SYMTAB, _SHT_STRTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL, _SHT_DYNSYM = 2, 3, 4, 8, 9, 11
_SHN_LORESERVE = 0xFF00
_SHF_EXECINSTR, _SHF_TLS = 0x4, 0x400
#: the function symengine's loader looks up in the object
_ENTRY = b"symengine_func"
#: x86-64 relocation types RuntimeDyldELF resolves (NONE, 64, PC32, GOT32, PLT32, GOTPCREL,
#: 32, 32S, 16, PC16, 8, PC8, PC64, GOTOFF64, GOTPC32, GOT64, GOTPCREL64, GOTPC64, PLTOFF64,
#: GOTPCRELX, REX_GOTPCRELX) and the width (bytes) each one patches
_X86_64_RELOCATIONS = {0: 0, 1: 8, 2: 4, 3: 4, 4: 4, 9: 4, 10: 4, 11: 4, 12: 2, 13: 2, 14: 1,
                       15: 1, 24: 8, 25: 8, 26: 4, 27: 8, 28: 8, 29: 8, 31: 8, 41: 4, 42: 4}


class _Fail(Exception):
    pass


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise _Fail(what)


@functools.lru_cache(maxsize=256)
def _resolvable(name: bytes) -> bool:
    """Whether the process can resolve the external symbol ``name`` (as RuntimeDyld would)."""
    try:
        process = ctypes.CDLL(None)
        getattr(process, name.decode("ascii"))
        return True
    except (AttributeError, OSError, UnicodeDecodeError, ValueError):
        return False


def _c_string(data: bytes, table: tuple[int, int], offset: int, what: str) -> bytes:
    start, size = table
    _need(offset < size, f"{what}: name offset {offset} outside its string table ({size} bytes)")
    end = data.find(b"\0", start + offset, start + size)
    _need(end >= 0, f"{what}: name not NUL-terminated inside its string table")
    return data[start + offset:end]


def _parse(data: bytes, kind: int) -> None:
    n = len(data)
    _need(n >= 64, f"{n} bytes: too short for an ELF header")
    _need(data[:4] == b"\x7fELF", "no ELF magic number (not an object file)")
    _need(data[4] == 2, f"ELF class {data[4]} (expected 2: 64-bit)")
    _need(data[5] == 1, f"ELF data encoding {data[5]} (expected 1: little-endian)")
    _need(data[6] == 1, f"ELF identification version {data[6]} (expected 1)")
    (e_type, e_machine, e_version, _entry, e_phoff, e_shoff, _flags, e_ehsize, e_phentsize,
     e_phnum, e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
    _need(e_type == kind, f"ELF type {e_type} (expected {kind}: "
                          f"{'a relocatable object' if kind == _ET_REL else 'a shared library'})")
    expected = _MACHINES.get(platform.machine().lower())
    _need(expected is None or e_machine == expected,
          f"ELF machine {e_machine}, but this is {platform.machine()} ({expected})")
    _need(e_version == 1, f"ELF version {e_version} (expected 1)")
    _need(e_ehsize == 64, f"ELF header size {e_ehsize} (expected 64)")
    _need(e_shentsize == 64, f"section header size {e_shentsize} (expected 64)")
    _need(0 < e_shnum < 0xFF00, f"{e_shnum} sections")
    _need(e_shoff >= 64 and e_shoff + 64 * e_shnum <= n,
          f"section header table at {e_shoff} (+{64 * e_shnum} bytes) outside the {n}-byte file")
    if kind == _ET_REL:
        _need(e_phnum == 0, f"{e_phnum} program headers in a relocatable object")
    elif e_phnum:
        _need(e_phentsize == 56 and e_phoff + 56 * e_phnum <= n, "program header table outside the file")
    _need(e_shstrndx < e_shnum, f"section name table index {e_shstrndx} >= {e_shnum} sections")
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + 64 * i) for i in range(e_shnum)]
    _need(sections[0][1] == 0 and sections[0][5] == 0, "section 0 is not the null section")
    for i, (_name, sh_type, _fl, _addr, offset, size, _link, _info, align, _ent) in enumerate(sections):
        if i == 0:
            continue
        if sh_type != _SHT_NOBITS:
            _need(offset + size <= n, f"section {i} ({offset}, {size} bytes) outside the {n}-byte file")
        _need(not _fl & _SHF_TLS or kind != _ET_REL, f"section {i}: thread-local storage (which the "
                                                      "loader does not implement)")
        _need(align == 0 or align & (align - 1) == 0, f"section {i}: alignment {align} not a power of 2")
    shstr = sections[e_shstrndx]
    _need(shstr[1] == _SHT_STRTAB, f"section {e_shstrndx} (the section name table) is not a string table")
    shstr_table = (shstr[4], shstr[5])
    _need(shstr[5] > 0 and data[shstr[4]] == 0, "the section name table does not start with NUL")
    for i, sec in enumerate(sections[1:], start=1):
        _c_string(data, shstr_table, sec[0], f"section {i}")
    symbols: dict[int, list[tuple[int, int, int]]] = {}     # symtab index -> [(shndx, value, size)]
    entries = 0
    for i, (_n, sh_type, _f, _a, offset, size, link, info, _al, entsize) in enumerate(sections):
        if sh_type not in (_SHT_SYMTAB, _SHT_DYNSYM):
            continue
        _need(entsize == 24 and size % 24 == 0, f"symbol table {i}: entry size {entsize}, size {size}")
        _need(link < e_shnum and sections[link][1] == _SHT_STRTAB,
              f"symbol table {i}: its string table ({link}) is not a string table")
        strtab = (sections[link][4], sections[link][5])
        count = size // 24
        _need(info <= count, f"symbol table {i}: first global symbol {info} beyond {count} symbols")
        table = []
        for j in range(count):
            st_name, st_info, _other, shndx, value, st_size = struct.unpack_from("<IBBHQQ", data,
                                                                                offset + 24 * j)
            name = _c_string(data, strtab, st_name, f"symbol {j}") if st_name or j else b""
            _need(shndx < e_shnum or shndx >= _SHN_LORESERVE,
                  f"symbol {j}: section index {shndx} >= {e_shnum} sections")
            if 0 < shndx < e_shnum and sections[shndx][1] != _SHT_NOBITS and kind == _ET_REL:
                _need(value <= sections[shndx][5] and value + st_size <= sections[shndx][5],
                      f"symbol {j} ({name!r}) outside its section {shndx}")
            if kind == _ET_REL and shndx == 0 and j and name:
                _need(st_info >> 4 in (1, 2), f"undefined symbol {name!r} is not global")
                _need(_resolvable(name), f"undefined symbol {name!r} is not available in this process")
            if kind == _ET_REL:
                _need(st_info & 0xF in (0, 1, 2, 3, 4) and st_info >> 4 in (0, 1, 2),
                      f"symbol {j} ({name!r}): type/binding {st_info:#x} the loader does not handle")
                if name == _ENTRY and 0 < shndx < e_shnum and st_info in (0x02, 0x12) \
                        and sections[shndx][2] & _SHF_EXECINSTR:
                    entries += 1
            table.append((shndx, value, st_size))
        symbols[i] = table
    if kind != _ET_REL:
        return
    _need(entries == 1, f"{entries} definitions of the function {_ENTRY.decode()} "
                        "(the kernel's entry point; expected 1)")
    for i, (_n, sh_type, _f, _a, offset, size, link, info, _al, entsize) in enumerate(sections):
        if sh_type not in (_SHT_RELA, _SHT_REL):
            continue
        width_entry = 24 if sh_type == _SHT_RELA else 16
        _need(entsize == width_entry and size % width_entry == 0,
              f"relocation section {i}: entry size {entsize}, size {size}")
        _need(link in symbols, f"relocation section {i}: its symbol table ({link}) is not one")
        _need(0 < info < e_shnum, f"relocation section {i}: target section {info} >= {e_shnum}")
        target_size = sections[info][5]
        count = size // width_entry
        for j in range(count):
            r_offset, r_info = struct.unpack_from("<QQ", data, offset + width_entry * j)
            sym, rtype = r_info >> 32, r_info & 0xFFFFFFFF
            _need(sym < len(symbols[link]), f"relocation {j} of section {i}: symbol {sym} beyond "
                                            f"{len(symbols[link])} symbols")
            width = 8
            if e_machine == 62:
                _need(rtype in _X86_64_RELOCATIONS, f"relocation {j} of section {i}: type {rtype} "
                                                    "that the loader does not implement")
                width = _X86_64_RELOCATIONS[rtype]
            _need(r_offset + width <= target_size,
                  f"relocation {j} of section {i} at {r_offset} outside its section ({target_size} bytes)")


def check_object_code(data: bytes, source: str) -> None:
    """Raise ModelFileError (naming ``source``) unless ``data`` is a well-formed relocatable
    ELF object for this machine that LLVM's loader can map (see the module docstring).

    Only ELF (Linux and the BSDs) is parsed; on macOS and Windows (Mach-O, COFF objects)
    only the size is checked.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModelFileError(f"{source}: the machine code is not bytes")
    data = bytes(data)
    if sys.platform.startswith(("darwin", "win")) and data[:4] != b"\x7fELF":
        if not data:
            raise ModelFileError(f"{source}: empty machine code")
        return
    try:
        _parse(data, _ET_REL)
    except (_Fail, struct.error) as exc:
        raise ModelFileError(f"{source}: the machine code is not a valid object file ({exc})") from None


def check_shared_library(data: bytes, source: str) -> None:
    """Raise ModelFileError unless ``data`` is a well-formed ELF shared library for this
    machine (headers, sections, symbols; Linux only, like :func:`check_object_code`)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        _parse(bytes(data), _ET_DYN)
    except (_Fail, struct.error) as exc:
        raise ModelFileError(f"{source}: not a valid shared library ({exc})") from None
