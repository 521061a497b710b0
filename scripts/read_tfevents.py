#!/usr/bin/env python3
"""Print the scalars of a TensorBoard event file, with the standard library alone.

Usage: read_tfevents.py FILE

An independent reader of the format in docs/format/tfevents.md (TFRecord
framing, masked CRC-32C, Event / Summary / Summary.Value protobufs),
written from the format rather than from Drover's Go code, so that
`go test ./train/runlog -run Python` can cross-check the two.

Output: a line "file_version <version> <wall_time>" for the file-version
event, then one line "<step>\t<tag>\t<value>\t<wall_time>" per scalar, values in
Python's repr of the float32 widened to a double. Exits 1 on a checksum
mismatch, a malformed protobuf or a truncated record, after printing the
records before it.
"""

import struct
import sys


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)."""
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc32c(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class Corrupt(Exception):
    pass


def varint(b, i):
    x, shift = 0, 0
    while True:
        if i >= len(b) or shift > 63:
            raise Corrupt("bad varint")
        c = b[i]
        i += 1
        x |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return x & 0xFFFFFFFFFFFFFFFF, i


def fields(b):
    """Yield (field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, typ = key >> 3, key & 7
        if typ == 0:
            v, i = varint(b, i)
        elif typ == 1:
            if i + 8 > len(b):
                raise Corrupt("short fixed64")
            v, i = b[i:i + 8], i + 8
        elif typ == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise Corrupt("short bytes")
            v, i = b[i:i + n], i + n
        elif typ == 5:
            if i + 4 > len(b):
                raise Corrupt("short fixed32")
            v, i = b[i:i + 4], i + 4
        else:
            raise Corrupt("wire type %d not handled" % typ)
        yield num, typ, v


def event(b):
    wall, step, version, values = 0.0, 0, None, []
    for num, typ, v in fields(b):
        if num == 1 and typ == 1:
            wall = struct.unpack("<d", v)[0]
        elif num == 2 and typ == 0:
            step = v - (1 << 64) if v >= 1 << 63 else v
        elif num == 3 and typ == 2:
            version = v.decode("utf-8", "replace")
        elif num == 5 and typ == 2:
            for snum, styp, sv in fields(v):
                if snum != 1 or styp != 2:
                    continue
                tag, value = "", None
                for vnum, vtyp, vv in fields(sv):
                    if vnum == 1 and vtyp == 2:
                        tag = vv.decode("utf-8", "replace")
                    elif vnum == 2 and vtyp == 5:
                        value = struct.unpack("<f", vv)[0]
                if value is not None:
                    values.append((tag, value))
    return wall, step, version, values


def records(data):
    i = 0
    while i < len(data):
        if i + 12 > len(data):
            raise Corrupt("truncated header at byte %d" % i)
        header = data[i:i + 8]
        (n,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", data[i + 8:i + 12])
        if hcrc != masked_crc32c(header):
            raise Corrupt("length checksum mismatch at byte %d" % i)
        if i + 12 + n + 4 > len(data):
            raise Corrupt("truncated record at byte %d" % i)
        body = data[i + 12:i + 12 + n]
        (dcrc,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
        if dcrc != masked_crc32c(body):
            raise Corrupt("data checksum mismatch at byte %d" % i)
        yield body
        i += 16 + n


def main(argv):
    if len(argv) != 2:
        print("usage: read_tfevents.py FILE", file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        data = f.read()
    try:
        for body in records(data):
            wall, step, version, values = event(body)
            if version is not None:
                print("file_version %s %r" % (version, wall))
            for tag, value in values:
                print("%d\t%s\t%r\t%r" % (step, tag, value, wall))
    except Corrupt as e:
        print("read_tfevents.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
