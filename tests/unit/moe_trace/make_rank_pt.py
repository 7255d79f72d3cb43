#!/usr/bin/env python3
"""Writes MoeTracing rank*.pt files the way torch.save writes them, without torch (for tests).

torch.save(list_of_int64_tensors, "rank003.pt") writes a zip of stored entries
<stem>/data.pkl, <stem>/byteorder, <stem>/data/<key>, <stem>/version: the pickle (protocol 2) holds
one torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())
call per tensor, each storage a persistent id ('storage', torch.LongStorage, key, 'cpu', numel)
whose little-endian int64 words are the entry data/<key>. Here the same pickle is produced by
Python's own pickler over stand-ins registered as torch.LongStorage and
torch._utils._rebuild_tensor_v2, as torch's pickler would name them.

usage:
  make_rank_pt.py spec SPEC.json OUT.pt
      SPEC: {"words": P, "groups": [[slot, ...], ...]}; slot: {"t0": cycles, "records":
      [[point_id, extra_word, cycle], ...], "counter": optional override of len(records) + 1}
  make_rank_pt.py from-trace TRACE.json OUT.pt MAP.json [--words P] [--t0 CYCLES]
      turns a skill-collector Chrome trace (args base_point_id, extra_id, core_type, core_id) back
      into the slots the device wrote (each core's records in time order, cycle = T0 + ts x 50) and
      writes the point map those ids need
"""
import collections
import json
import pickle
import struct
import sys
import types
import zipfile


class LongStorage:
    pass


def _rebuild_tensor_v2(*args):
    raise RuntimeError("stand-in")


LongStorage.__module__, LongStorage.__qualname__ = "torch", "LongStorage"
_rebuild_tensor_v2.__module__ = "torch._utils"
torch = types.ModuleType("torch")
torch_utils = types.ModuleType("torch._utils")
torch.LongStorage = LongStorage
torch._utils = torch_utils
torch_utils._rebuild_tensor_v2 = _rebuild_tensor_v2
sys.modules["torch"], sys.modules["torch._utils"] = torch, torch_utils


class Storage:
    def __init__(self, key, words):
        self.key, self.words = key, words


class Tensor:
    def __init__(self, storage, rows, cols):
        self.storage, self.rows, self.cols = storage, rows, cols

    def __reduce_ex__(self, protocol):
        return (_rebuild_tensor_v2,
                (self.storage, 0, (self.rows, self.cols), (self.cols, 1), False, collections.OrderedDict()))


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", LongStorage, obj.key, "cpu", len(obj.words))
        return None


def slot_words(slot, words):
    w = [0] * words
    records = slot["records"]
    w[0] = slot.get("counter", len(records) + 1)
    w[words - 1] = slot["t0"]
    for i, (point, extra, cycle) in enumerate(records[: (words - 2) // 2]):
        w[1 + i] = ((extra & 0xFFFFFFFF) << 32 | (point & 0xFFFFFFFF)) - (1 << 64 if extra & 0x80000000 else 0)
        w[words - 2 - i] = cycle
    return w


def write_pt(path, groups, words):
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    tensors, storages = [], []
    for g, slots in enumerate(groups):
        flat = []
        for slot in slots:
            flat += slot_words(slot, words)
        storages.append(Storage(str(g), flat))
        tensors.append(Tensor(storages[-1], len(slots), words))
    import io
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(tensors)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(stem + "/data.pkl", buf.getvalue())
        z.writestr(stem + "/byteorder", "little")
        for s in storages:
            z.writestr(stem + "/data/" + s.key, struct.pack("<%dq" % len(s.words), *s.words))
        z.writestr(stem + "/version", "3\n")


def from_trace(trace_path, out_pt, out_map, words, t0):
    with open(trace_path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    cores, points = collections.defaultdict(list), {}
    for e in events:
        if e.get("ph") not in ("B", "E"):
            continue
        a = e["args"]
        label = e["name"].rsplit(" [extra:", 1)[0]
        points[str(a["base_point_id"])] = {"label": label, "event_type": e["ph"], "file": a.get("file", ""),
                                           "line": a.get("line", 0)}
        cycle = round(float(e["ts"]) * 50)
        cores[(a["core_type"], a["core_id"])].append((cycle, a["base_point_id"], a["extra_id"]))
    groups = []
    for (t, c) in sorted(cores):
        while len(groups) <= t:
            groups.append([])
        while len(groups[t]) <= c:
            groups[t].append({"t0": t0, "records": []})
        base = t0 + 7 * (t * 100 + c)  # each core's own entry cycle
        recs = sorted(cores[(t, c)], key=lambda r: r[0])
        groups[t][c] = {"t0": base, "records": [[p, x, base + cyc] for cyc, p, x in recs]}
    write_pt(out_pt, groups, words)
    with open(out_map, "w") as f:
        json.dump({"points": points}, f)


def main(argv):
    if len(argv) >= 4 and argv[1] == "spec":
        with open(argv[2]) as f:
            spec = json.load(f)
        write_pt(argv[3], spec["groups"], spec["words"])
        return 0
    if len(argv) >= 5 and argv[1] == "from-trace":
        words = int(argv[argv.index("--words") + 1]) if "--words" in argv else 2048
        t0 = int(argv[argv.index("--t0") + 1]) if "--t0" in argv else 10**12
        from_trace(argv[2], argv[3], argv[4], words, t0)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
