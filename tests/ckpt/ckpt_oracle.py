#!/usr/bin/env python3
"""The checkpoint files against independent readers (issue 17).

usage: ckpt_oracle.py <run_mpi.sh> <ckpt_sample> <dir> <ferry-ckpt>

Runs ckpt_sample on 3 ranks, then for every file: ncvalidator (PnetCDF) and
ncdump -h (netCDF-C) accept it; netCDF4-python and xarray read every
variable's global array (stacked files reassembled with the recipe of
docs/checkpoint.md) equal to the values the writer put there; every
ferry_checksum attribute matches the spec's checksum computed here from the
file's bytes (a second implementation of docs/checkpoint.md). ferry-ckpt
converts every stacked file to the global image, serially and on 2 ranks
(read back here like the others, in the format it had), verifies every file
and rejects one with a flipped byte, and does not call a netCDF file it did
not write valid.
"""
import os
import shutil
import subprocess
import sys

import netCDF4
import numpy as np
import xarray as xr

VARS = {"temp": (0, np.float64), "ssh": (1, np.float32), "count": (2, np.int32), "tke": (3, np.int16)}
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def expected(var, dtype, shape, step=7):
    """tests/ckpt/ckpt_cases.c cc_value over the global index space."""
    k = np.arange(int(np.prod(shape)), dtype=np.int64) * 1000003 + var * 7919 + step * 104729
    if dtype == np.float64:
        v = k.astype(np.float64) * 0.37 + 1.0 / 3.0
    elif dtype == np.float32:
        v = (k % 100000).astype(np.float32) * np.float32(0.5) + np.float32(0.25)
    elif dtype == np.int32:
        v = (k % 2000000011 - 1000).astype(np.int32)
    else:
        v = (k % 30011).astype(np.int16)
    return v.reshape(shape)


def global_array(ds, name):
    """The recipe of docs/checkpoint.md: a stacked variable as its global array."""
    v = ds[name]
    shape = [int(n) for n in np.atleast_1d(v.attrs["ferry_global_shape"])]
    out = np.zeros(shape, v.dtype)
    for s, c, o in zip(ds[name + "_start"].values, ds[name + "_count"].values, ds[name + "_offset"].values):
        n = int(np.prod(c))
        if n:
            out[tuple(slice(a, a + b) for a, b in zip(s, c))] = v.values[o:o + n].reshape(c)
    return xr.DataArray(out, dims=v.attrs["ferry_global_dims"].split())


def checksum(values):
    """docs/checkpoint.md: sum of big-endian bits times (2i+1)*golden, mod 2^64."""
    flat = np.ascontiguousarray(values).reshape(-1)
    size = flat.dtype.itemsize
    bits = flat.astype(flat.dtype.newbyteorder(">")).view(">u%d" % size).astype(np.uint64)
    k = (np.arange(flat.size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)) * GOLDEN
    with np.errstate(over="ignore"):
        return "%016x" % int(np.sum(bits * k, dtype=np.uint64))


def var_begins(raw):
    """Every variable's begin offset and whether it has a ferry_checksum, from
    a plain parse of the classic header (CDF-2: 4-byte counts; CDF-5: 8-byte)."""
    wide = raw[3] == 5
    at = [4]

    def count():
        n = 8 if wide else 4
        v = int.from_bytes(raw[at[0]:at[0] + n], "big")
        at[0] += n
        return v

    def chunk(n):
        v = raw[at[0]:at[0] + n]
        at[0] += (n + 3) // 4 * 4
        return v

    def atts():
        found = {}
        at[0] += 4
        for _ in range(count()):
            name = chunk(count()).decode()
            kind = int.from_bytes(chunk(4), "big")
            found[name] = chunk(count() * {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 10: 8}[kind])
        return found

    count()  # numrecs
    at[0] += 4
    for _ in range(count()):
        chunk(count())
        count()
    atts()
    begins = []
    at[0] += 4
    for _ in range(count()):
        chunk(count())
        for _ in range(count()):
            count()
        has_sum = "ferry_checksum" in atts()
        at[0] += 4
        count()  # vsize
        begins.append((int.from_bytes(chunk(8), "big"), has_sum))
    return begins


def data_begins(raw):
    """The begin offsets of the variables with a ferry_checksum."""
    return [begin for begin, has_sum in var_begins(raw) if has_sum]


def header_checksum(path, header_len=None):
    """docs/format/netcdf.md: the bytes before the first data variable (the
    header, header_len, in a series), the attribute's own value read as 16
    '0's and numrecs as zeros, summed as bytes."""
    raw = open(path, "rb").read()
    covered = bytearray(raw[:header_len or min(data_begins(raw))])
    covered[4:12 if raw[3] == 5 else 8] = bytes(8 if raw[3] == 5 else 4)
    # The name (21 bytes, padded to 24), its type (4) and its count (4 or 8) come before the value.
    value = covered.index(b"ferry_header_checksum") + 24 + 4 + (8 if raw[3] == 5 else 4)
    stored = bytes(covered[value:value + 16]).decode()
    covered[value:value + 16] = b"0" * 16
    with np.errstate(over="ignore"):
        bits = np.frombuffer(bytes(covered), dtype=np.uint8).astype(np.uint64)
        k = (np.arange(bits.size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)) * GOLDEN
        return stored, "%016x" % int(np.sum(bits * k, dtype=np.uint64))


def check_file(path, stacked=None, nranks=3):
    for tool in (["ncvalidator", "-q", path], ["ncdump", "-h", path]):
        if shutil.which(tool[0]):
            subprocess.run(tool, check=True, stdout=subprocess.DEVNULL)
        else:
            print("ckpt_oracle: %s not installed (tools/setup.sh installs it)" % tool[0])
            sys.exit(1)
    if stacked is None:
        stacked = "stack" in os.path.basename(path)
    with netCDF4.Dataset(path) as nc:
        assert nc.ferry_step == 7 and nc.ferry_time == 3.5 and nc.ferry_nranks == nranks, path
        for name in VARS:
            data = nc[name][:].data
            assert nc[name].ferry_checksum == checksum(data), (path, name, nc[name].ferry_checksum, checksum(data))
        stored, computed = header_checksum(path)
        assert nc.ferry_header_checksum == stored == computed, (path, nc.ferry_header_checksum, stored, computed)
    with xr.open_dataset(path) as ds:
        for name, (var, dtype) in VARS.items():
            got = global_array(ds, name) if stacked else ds[name]
            want = expected(var, dtype, got.shape)
            assert got.dtype == dtype and got.values.tobytes() == want.tobytes(), (path, name)
    print("ckpt_oracle: %s: ncvalidator, ncdump -h, netCDF4, xarray and checksums agree" % os.path.basename(path))


SERIES_HOLES = {"temp": 2, "ssh": 2, "count": 4, "tke": 0}  # rows no rank owns (tests/ckpt/ckpt_sample.c)


def check_series(path):
    """A series file (steps 5-7 as records along time): ncvalidator and ncdump
    accept it; xarray decodes the times from their units and the fill values
    as missing where no rank wrote (only there); the attributes arrive; every
    record's checksums match the data as stored; the header checksum holds."""
    for tool in (["ncvalidator", "-q", path], ["ncdump", "-h", path]):
        subprocess.run(tool, check=True, stdout=subprocess.DEVNULL)
    with xr.open_dataset(path) as ds:
        want = np.datetime64("2000-01-01T06:00") + np.arange(3) * np.timedelta64(1, "D")
        assert (ds.time.values == want).all(), ds.time.values
        assert ds.attrs["Conventions"] == "CF-1.8" and ds.attrs["title"].startswith("ferry"), ds.attrs
        assert ds["temp"].attrs["units"] == "degC" and list(ds["temp"].attrs["valid_range"]) == [-5.0, 40.0]
        assert ds["temp"].encoding["_FillValue"] == -999.0 and ds["ssh"].encoding["_FillValue"] == np.float32(1e20)
        for name, (var, dtype) in VARS.items():
            got = ds[name]
            assert got.dims[0] == "time" and got.shape[0] == 3, got.dims
            for k, step in enumerate((5, 6, 7)):
                values = got.values[k]
                want = expected(var, dtype, values.shape, step).astype(values.dtype)
                rows = values.ndim - 2 if values.ndim >= 2 else 0
                owned = [slice(None)] * values.ndim
                owned[rows] = slice(0, values.shape[rows] - SERIES_HOLES[name])
                assert (values[tuple(owned)] == want[tuple(owned)]).all(), (path, name, k)
                hole = np.ones(values.shape, bool)
                hole[tuple(owned)] = False
                if name in ("temp", "ssh"):
                    assert np.isnan(values[hole]).all() and not np.isnan(values[~hole]).any(), (path, name)
                else:
                    assert (values[hole] == 0).all(), (path, name)
    with netCDF4.Dataset(path) as nc:
        nc.set_auto_mask(False)
        assert nc.dimensions["time"].isunlimited() and list(nc["ferry_step"][:]) == [5, 6, 7]
        sums = nc["ferry_checksum"][:]
        for k in range(3):
            for i, name in enumerate(VARS):
                stored = bytes(sums[k, i]).decode()
                assert stored == checksum(nc[name][k]), (path, name, k, stored, checksum(nc[name][k]))
    raw = open(path, "rb").read()
    stored, computed = header_checksum(path, header_len=min(begin for begin, _ in var_begins(raw)))
    assert stored == computed, (path, stored, computed)
    print("ckpt_oracle: %s: ncvalidator, ncdump -h, xarray times and fill values, attributes, record checksums agree" % os.path.basename(path))


def check_tool(run_mpi, tool, path):
    # Through the MPI runner, which also sets the sanitizers' options in the ASan build.
    subprocess.run([run_mpi, "60", "1", tool, "info", path], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([run_mpi, "60", "1", tool, "verify", path], check=True, stdout=subprocess.DEVNULL)
    if "stack" in os.path.basename(path):
        for ranks in ("1", "2"):
            out = path.replace("stack", "image%s" % ranks).replace(".000000000007.nc", ".nc")
            subprocess.run([run_mpi, "60", ranks, tool, "convert", path, out], check=True, stdout=subprocess.DEVNULL)
            check_file(out, False, int(ranks))
            with open(path, "rb") as a, open(out, "rb") as b:
                assert a.read(4) == b.read(4), "convert changed the format of %s" % path  # CDF-2 stays CDF-2
            os.remove(out)
    flipped = path + ".flipped"
    shutil.copy(path, flipped)
    with open(flipped, "r+b") as f:
        f.seek(-9, os.SEEK_END)
        byte = f.read(1)
        f.seek(-9, os.SEEK_END)
        f.write(bytes([byte[0] ^ 0x40]))
    bad = subprocess.run([run_mpi, "60", "1", tool, "verify", flipped], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert bad.returncode != 0 and "fails its checksum" in bad.stderr, bad.stderr
    os.remove(flipped)


def check_foreign(run_mpi, tool, directory):
    """A netCDF file ferry did not write, named like step 3 of a set: verify
    does not call it valid, info takes its step from the name."""
    path = os.path.join(directory, "foreign.000000000003.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as nc:
        nc.createDimension("x", 5)
        nc.createVariable("v", "f8", ("x",))[:] = np.arange(5.0)
    bad = subprocess.run([run_mpi, "60", "1", tool, "verify", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert bad.returncode != 0 and "valid" not in bad.stdout and "no checksums" in bad.stderr, (bad.stdout, bad.stderr)
    info = subprocess.run([run_mpi, "60", "1", tool, "info", path], check=True, stdout=subprocess.PIPE, text=True)
    assert "not a ferry checkpoint" in info.stdout and "step 3" in info.stdout, info.stdout
    os.remove(path)
    print("ckpt_oracle: a foreign netCDF file: verify refuses to call it valid, info reads its step from its name")


def main():
    run_mpi, sample, directory, tool = sys.argv[1:5]
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    subprocess.run([run_mpi, "120", "3", sample, directory], check=True)
    files = sorted(f for f in os.listdir(directory) if f.endswith(".nc") and not f.startswith("series"))
    assert len(files) == 6, files
    for f in ("series_cdf5.nc", "series_cdf2.nc"):
        check_series(os.path.join(directory, f))
        subprocess.run([run_mpi, "60", "2", tool, "verify", os.path.join(directory, f)], check=True, stdout=subprocess.DEVNULL)
    for f in files:
        check_file(os.path.join(directory, f))
        check_tool(run_mpi, tool, os.path.join(directory, f))
    check_foreign(run_mpi, tool, directory)
    shutil.rmtree(directory)


if __name__ == "__main__":
    main()
