"""Child process of test_damaged_files.py: loads damaged copies of a saved model (and of a
trajectory file), each in a forked process, and prints what came out as JSON.

    python fuzz_files_child.py MODEL.npz TRAJECTORY.npz WORKDIR COUNT SEED

Each case forks: the grandchild loads the file and exits 0 (loaded), 3 (a documented
SymbodyFileError) or 4 (anything else, its type printed); a signal (an LLVM abort is
SIGABRT, exit 134 from a shell) is reported by the parent.  Kinds of damage: random byte
flips and truncations of the whole file (the zip CRC catches most), and flips in one
kernel's machine code or expression blob with the SHA-256 and size in the header
recomputed (what only the object-code check catches).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys

import numpy as np

import symbody as sb
from symbody.errors import SymbodyFileError


def _blob_descs(header: dict, kind: str) -> list[dict]:
    found = []

    def walk(v):
        if isinstance(v, dict):
            if kind == "code" and isinstance(v.get("llvm"), dict) and "code" in v["llvm"]:
                found.append(v["llvm"]["code"])
            if kind == "expressions" and isinstance(v.get("expressions"), dict):
                found.append(v["expressions"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(header)
    unique = {d["blob"]: d for d in found}
    return list(unique.values())


def _mutate(data: bytearray, rng: random.Random) -> bytearray:
    kind = rng.random()
    if kind < 0.15:
        return data[:rng.randrange(len(data))]
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(data))
        if kind < 0.6:
            data[i] ^= 1 << rng.randrange(8)
        else:
            data[i] = rng.randrange(256)
    return data


def _rehashed(model_path: str, out: str, kind: str, rng: random.Random) -> bool:
    """A copy of the model with one blob mutated and its hash (and the file's digest)
    recomputed (False: no blob)."""
    with np.load(model_path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(arrays["header"].tobytes().decode())
    descs = _blob_descs(header, kind)
    if not descs:
        return False
    desc = rng.choice(descs)
    blob = _mutate(bytearray(arrays["blob_" + desc["blob"]].tobytes()), rng)
    arrays["blob_" + desc["blob"]] = np.frombuffer(bytes(blob), dtype=np.uint8)
    desc["sha256"], desc["size"] = hashlib.sha256(bytes(blob)).hexdigest(), len(blob)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    # and the whole-file digest: the deeper checks (object code, expressions) are what is fuzzed
    from symbody.compilation.persistence import file_digest
    arrays["digest"] = np.frombuffer(file_digest(arrays).encode(), dtype=np.uint8)
    with open(out, "wb") as fh:
        np.savez(fh, **arrays)
    return True


def _load(kind: str, path: str) -> None:
    try:
        if kind == "trajectory":
            sb.Trajectory.load(path)
        else:
            sb.load_model(path, machine_code=(kind != "expressions"))
    except SymbodyFileError:
        os._exit(3)
    except BaseException as exc:          # noqa: BLE001 - reported to the parent
        sys.stdout.write(f"{type(exc).__name__}: {exc}\n")
        sys.stdout.flush()
        os._exit(4)
    os._exit(0)


def main() -> None:
    model_path, traj_path, work, count, seed = sys.argv[1:6]
    rng = random.Random(int(seed))
    # the imports and first-use set-up done once, before the forks
    sb.load_model(model_path)
    sb.load_model(model_path, machine_code=False)
    sb.Trajectory.load(traj_path)
    raw = {"model": open(model_path, "rb").read(), "trajectory": open(traj_path, "rb").read()}
    results: dict[str, dict[str, int]] = {}
    failures: list[str] = []
    kinds = ["model", "trajectory", "code", "code", "expressions"]
    for n in range(int(count)):
        kind = kinds[n % len(kinds)]
        path = os.path.join(work, f"case{n}.npz")
        if kind in ("model", "trajectory"):
            with open(path, "wb") as fh:
                fh.write(bytes(_mutate(bytearray(raw[kind]), rng)))
        elif not _rehashed(model_path, path, kind, rng):
            continue
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            os.dup2(write, 1)
            os.dup2(write, 2)
            _load(kind, path)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        text = os.read(read, 2000).decode(errors="replace")
        os.close(read)
        if os.WIFSIGNALED(status):
            outcome = f"signal {os.WTERMSIG(status)}"
        else:
            outcome = {0: "loaded", 3: "documented error"}.get(os.WEXITSTATUS(status),
                                                             f"exit {os.WEXITSTATUS(status)}")
        results.setdefault(kind, {}).setdefault(outcome, 0)
        results[kind][outcome] += 1
        if outcome not in ("loaded", "documented error"):
            failures.append(f"{kind} case {n}: {outcome}: {text.strip()[:300]}")
        os.unlink(path)
    print(json.dumps({"results": results, "failures": failures[:20]}))


if __name__ == "__main__":
    main()
