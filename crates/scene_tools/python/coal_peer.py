"""Coal (the FCL successor, PyPI package `coal`) as the distance peer of `rpq_bench`.

Run by `rpq_bench` in the benchmark venv (`crates/scene_tools/setup_bench_venv.sh`), never by
hand. It reads one job file written by `rpq_bench` (little-endian):

    b"RPQCOAL1"
    u32 meshes; per mesh: u32 nv, u32 nt, f64[nv*3] vertices, u32[nt*3] triangles
    u32 bodies; u32[bodies] mesh index of each body
    u32 pairs;  per pair: u32 body a, u32 body b
    u32 configs; per config: f64[bodies*12] body poses (rotation row-major, then translation)
    per config: u32 n, then n x (u32 pair index, f64 lower bound): the pruned robot-layer
                order (pairs sorted by their box lower bound; stop once the bound reaches the
                best distance found)
    u32 repetitions

and writes JSON on stdout. Everything Coal needs (BVH models, transforms, functors) is made
before the timed loops; the loops only call Coal. Times are `time.perf_counter_ns` around the
calls of one configuration; the binding overhead (a Python call into Coal that does almost no
work) is measured separately and reported, not subtracted here.
"""

import json
import os
import struct
import sys
import time

import numpy as np
import coal


def read_job(path):
    data = open(path, "rb").read()
    off = 0

    def take(fmt):
        nonlocal off
        v = struct.unpack_from("<" + fmt, data, off)
        off += struct.calcsize("<" + fmt)
        return v

    def array(dtype, n):
        nonlocal off
        a = np.frombuffer(data, dtype=dtype, count=n, offset=off)
        off += a.nbytes
        return a

    assert data[:8] == b"RPQCOAL1", "not an rpq_bench job file"
    off = 8
    (nm,) = take("I")
    meshes = []
    for _ in range(nm):
        nv, nt = take("II")
        v = array("<f8", nv * 3).reshape(nv, 3).copy()
        t = array("<u4", nt * 3).reshape(nt, 3).astype(np.int64)
        meshes.append((v, t))
    (nb,) = take("I")
    body_mesh = list(array("<u4", nb))
    (npairs,) = take("I")
    pairs = [take("II") for _ in range(npairs)]
    (nc,) = take("I")
    poses = array("<f8", nc * nb * 12).reshape(nc, nb, 12)
    orders = []
    for _ in range(nc):
        (n,) = take("I")
        orders.append([take("Id") for _ in range(n)])
    (reps,) = take("I")
    return meshes, body_mesh, pairs, poses, orders, reps


def bvh(v, t):
    m = coal.BVHModelOBBRSS()
    m.beginModel(len(t), len(v))
    m.addVertices(v)
    m.addTriangles(t)
    m.endModel()
    return m


def transform(p):
    return coal.Transform3s(np.ascontiguousarray(p[:9].reshape(3, 3)), np.ascontiguousarray(p[9:12]))


def main():
    meshes, body_mesh, pairs, poses, orders, reps = read_job(sys.argv[1])
    # BVH build of every mesh (best of 5), as rpq_bench times ours.
    build = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        models = [bvh(v, t) for v, t in meshes]
        build = min(build, time.perf_counter_ns() - t0)
    # One functor per body pair (Coal caches the dispatch in it), made before timing.
    functors = [coal.ComputeDistance(models[body_mesh[a]], models[body_mesh[b]]) for a, b in pairs]
    tfs = [[transform(p) for p in conf] for conf in poses]
    req = coal.DistanceRequest()  # rel_err = abs_err = 0: exact
    res = coal.DistanceResult()

    raw_ns = []
    raw_min = []
    per_pair = []
    for c, tf in enumerate(tfs):
        best = float("inf")
        t_best = float("inf")
        dists = None
        for _ in range(reps):
            ds = []
            t0 = time.perf_counter_ns()
            for k, (a, b) in enumerate(pairs):
                res.clear()
                ds.append(functors[k](tf[a], tf[b], req, res))
            t1 = time.perf_counter_ns()
            t_best = min(t_best, t1 - t0)
            dists = ds
        raw_ns.append(t_best)
        raw_min.append(min(dists))
        per_pair.append(dists)

    pruned_ns = []
    pruned_min = []
    pruned_queries = 0
    for c, tf in enumerate(tfs):
        order = orders[c]
        t_best = float("inf")
        for _ in range(reps):
            best = float("inf")
            n = 0
            t0 = time.perf_counter_ns()
            for k, lb in order:
                if lb > best:
                    break
                a, b = pairs[k]
                res.clear()
                d = functors[k](tf[a], tf[b], req, res)
                n += 1
                if d < best:
                    best = d
            t1 = time.perf_counter_ns()
            t_best = min(t_best, t1 - t0)
        pruned_queries += n
        pruned_ns.append(t_best)
        pruned_min.append(best if best != float("inf") else 1e300)

    # Binding overhead: the same call path on two one-triangle models far apart (the query
    # itself is a few hundred nanoseconds of C++), per call.
    tri = (np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), np.array([[0, 1, 2]]))
    small = bvh(*tri)
    f = coal.ComputeDistance(small, small)
    ta = coal.Transform3s()
    tb = coal.Transform3s(np.eye(3), np.array([0.0, 0.0, 5.0]))
    calls = int(os.environ.get("COAL_PEER_OVERHEAD_CALLS", "20000"))
    overhead = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            res.clear()
            f(ta, tb, req, res)
        overhead = min(overhead, (time.perf_counter_ns() - t0) / max(calls, 1))
    json.dump(
        {
            "coal_version": getattr(coal, "__version__", "?"),
            "build_ns": build,
            "raw_ns": raw_ns,
            "raw_min": raw_min,
            "per_pair": per_pair,
            "pruned_ns": pruned_ns,
            "pruned_min": pruned_min,
            "pruned_queries": pruned_queries,
            "overhead_ns_per_call": overhead,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
