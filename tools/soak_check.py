#!/usr/bin/python3
"""The soak's checker: reads what tools/soak.py recorded and says which invariants held.

  /usr/bin/python3 tools/soak_check.py SOAK_DIR      (the folder a soak ran in, kept with --keep)

Inputs, all in SOAK_DIR (tools/soak.py writes them; docs/reliability.md describes them):
  history.jsonl   one JSON object a line: every client call ("op": create, get, list, suspend,
                  resume, delete; "t0"/"t1" its start and end on the monotonic clock; "res" ok,
                  fail (a definite answer) or info (no answer: it may or may not have happened)),
                  every watch event and (re)opening, every fault injected, jobsetd's samples
  final.json      the full List at the end ("jobsets") and every pod ("pods"), "t" when taken
  marks/*.log     the pods' own stamps: "start|beat|exit T POD_UID NODE ATTEMPT INPLACE RJOB
                  JOBINDEX PODINDEX PID [CODE]" (T on the wall clock: time.time())
  leftovers.json  processes and mounts of the run found after everything was stopped

Each invariant is a function `check_NAME(run) -> [violation, ...]`; an empty list is a pass.
"""
import bisect
import collections
import json
import os
import sys

# How long two processes of one pod identity may seem to overlap from their stamps alone:
# a process beats every 0.5 s, so its last beat is up to that much before it really stopped.
OVERLAP_SLACK_S = 1.0
# A gang may be partly running (some of an attempt's pods started, not all) at most this long.
PARTIAL_GANG_BOUND_S = 30.0
# jobsetd's RSS may grow this much over the second half of its longest life (and fds by FD_SLACK).
RSS_GROWTH_LIMIT = 0.05
FD_SLACK = 16
MIN_LIFE_S = 600
TERMINAL = ("Completed", "Failed")
# After a frozen agent thaws it may take this long to hear it must stop a replaced pod.
FROZEN_AFTER_S = 5.0


class Run:
    """Everything one soak recorded, parsed once."""

    def __init__(self, calls, watch, faults, samples, final, stamps, leftovers, meta, exits=()):
        self.calls = calls  # client calls, in the order they were written
        self.watch = watch  # watch records, per watcher in order
        self.faults = faults
        self.samples = samples  # jobsetd pid, rss_kb, fds, t
        self.final = final  # {"jobsets": [...], "pods": [...], "t": ...}
        self.stamps = stamps  # jobset name -> [stamp dict]
        self.leftovers = leftovers
        self.meta = meta  # pods per attempt and phased shapes by name, watchers caught up
        self.exits = list(exits)  # processes that exited without the soak killing them


def load(folder):
    calls, watch, faults, samples, exits, meta = [], [], [], [], [], {}
    with open(os.path.join(folder, "history.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            kind = r.get("op")
            if kind in ("watch", "watch_open", "watch_break"):
                watch.append(r)
            elif kind == "fault":
                faults.append(r)
            elif kind == "sample":
                samples.append(r)
            elif kind == "meta":
                meta.update(r)
            elif kind == "exit":
                exits.append(r)
            else:
                calls.append(r)
    with open(os.path.join(folder, "final.json")) as f:
        final = json.load(f)
    stamps = collections.defaultdict(list)
    marks = os.path.join(folder, "marks")
    for entry in sorted(os.listdir(marks)) if os.path.isdir(marks) else []:
        if not entry.endswith(".log"):
            continue
        with open(os.path.join(marks, entry), errors="replace") as f:
            for line in f:
                s = parse_stamp(line)
                if s is not None:
                    stamps[entry[:-4]].append(s)
    leftovers = {}
    path = os.path.join(folder, "leftovers.json")
    if os.path.exists(path):
        with open(path) as f:
            leftovers = json.load(f)
    return Run(calls, watch, faults, samples, final, stamps, leftovers, meta, exits)


def parse_stamp(line):
    parts = line.split()
    if len(parts) < 10 or parts[0] not in ("start", "beat", "exit"):
        return None  # a line cut by a kill, or a pod's own output
    try:
        return {"kind": parts[0], "t": float(parts[1]), "pod": parts[2], "node": parts[3],
                "attempt": parts[4], "inplace": parts[5], "rjob": parts[6], "job": parts[7],
                "index": parts[8], "pid": parts[9],
                "code": int(parts[10]) if parts[0] == "exit" and len(parts) > 10 else None}
    except ValueError:
        return None


def _acked(calls, op):
    """name -> the first call of `op` that succeeded (with its record)."""
    out = {}
    for c in calls:
        if c["op"] == op and c["res"] == "ok" and c["name"] not in out:
            out[c["name"]] = c
    return out


def check_acked_creates_kept(run):
    """Every acknowledged create is in the final List, with its uid and spec, unless a delete
    that may have happened (ok or info), or its TTL after it finished, removed it."""
    final = {j["name"]: j for j in run.final["jobsets"]}
    may_be_deleted = {c["name"] for c in run.calls if c["op"] == "delete" and c["res"] in ("ok", "info")}
    bad = []
    for name, c in _acked(run.calls, "create").items():
        got = final.get(name)
        if got is None:
            if name in may_be_deleted or c.get("ttl"):
                continue
            bad.append(f"{name}: created (uid {c['uid']}, acknowledged at t={c['t1']:.3f}) is gone")
        elif got["uid"] != c["uid"]:
            bad.append(f"{name}: uid {c['uid']} acknowledged, {got['uid']} at the end")
        elif got["spec"] != c["spec"]:
            bad.append(f"{name}: spec altered: hash {c['spec']} acknowledged, {got['spec']} at the end")
    return bad


def check_refused_creates_absent(run):
    """A name whose every create was refused with a definite answer (not ALREADY_EXISTS, which
    answers a retry of one that landed) is never seen: a refusal changed nothing."""
    refused, landed = set(), set()
    for c in run.calls:
        if c["op"] != "create":
            continue
        if c["res"] == "fail" and c.get("code") != "ALREADY_EXISTS":
            refused.add(c["name"])
        else:
            landed.add(c["name"])
    refused -= landed
    seen = {j["name"] for j in run.final["jobsets"]}
    seen.update(w["name"] for w in run.watch if w["op"] == "watch")
    for c in run.calls:
        if c["op"] in ("get", "list") and c["res"] == "ok":
            seen.update(o["name"] for o in _observations(c))
    return [f"{name}: its create was refused, yet it exists" for name in sorted(refused & seen)]


def check_nothing_unasked(run):
    """Nothing is in the final List that no client asked for."""
    asked = {c["name"] for c in run.calls if c["op"] == "create"}
    return [f"{j['name']}: present at the end, never created" for j in run.final["jobsets"]
            if j["name"] not in asked]


def check_one_uid_per_name(run):
    """A name answered with two uids: a retried create made a second JobSet."""
    uids = collections.defaultdict(set)
    for c in run.calls:
        if c["res"] == "ok" and c.get("uid"):
            uids[c["name"]].add(c["uid"])
    for w in run.watch:
        if w["op"] == "watch" and w.get("uid"):
            uids[w["name"]].add(w["uid"])
    return [f"{n}: {len(u)} uids seen ({', '.join(sorted(u))})" for n, u in sorted(uids.items()) if len(u) > 1]


def check_no_resurrected_deletes(run):
    """A JobSet whose delete was acknowledged is never seen again: not by a read that started
    after the acknowledgement, and not in the final List."""
    deleted = {name: c["t1"] for name, c in _acked(run.calls, "delete").items()}
    bad = []
    for c in run.calls:
        if c["op"] in ("get", "list") and c["res"] == "ok":
            for o in _observations(c):
                t = deleted.get(o["name"])
                if t is not None and c["t0"] > t:
                    bad.append(f"{o['name']}: deleted at t={t:.3f}, read back by a {c['op']} at t={c['t0']:.3f}")
    for j in run.final["jobsets"]:
        if j["name"] in deleted:
            bad.append(f"{j['name']}: deleted at t={deleted[j['name']]:.3f}, in the final List")
    return bad


def _observations(call):
    """The JobSet states a get or list returned: dicts with name, uid, restarts, terminal."""
    if call["op"] == "get":
        return [call] if "restarts" in call else []
    return call.get("items", [])


def _states(run):
    """uid -> [(revision, restarts, terminal, t0, t1, what, is_read)] of every state seen: reads'
    answers, the creates', suspends' and resumes' answers, watch events, the final List."""
    obs = collections.defaultdict(list)
    for c in run.calls:
        if c["op"] in ("get", "list", "create", "suspend", "resume") and c["res"] == "ok":
            for o in _observations(c) if c["op"] in ("get", "list") else [c]:
                if "restarts" in o and o.get("rv"):
                    obs[o["uid"]].append((int(o["rv"]), o["restarts"], o.get("terminal", False), c["t0"],
                                          c["t1"], f"{c['op']} of {o['name']}", True))
    for w in run.watch:
        if w["op"] == "watch" and "restarts" in w and w.get("rv"):
            obs[w["uid"]].append((int(w["rv"]), w["restarts"], w.get("terminal", False), w["t"], w["t"],
                                  f"watcher {w['w']}'s event for {w['name']}", False))
    t = run.final.get("t", float("inf"))
    for j in run.final["jobsets"]:
        obs[j["uid"]].append((int(j["rv"]), j["restarts"], j["terminal"], t, t, f"the final List of {j['name']}",
                              True))
    return obs


def check_attempts_never_decrease(run):
    """Per JobSet uid, in revision order: restarts (and in-place attempts) never decrease, a
    finished JobSet never becomes active, and one revision always shows one state."""
    bad = []
    for uid, seen in _states(run).items():
        seen = sorted(seen, key=lambda o: o[0])
        for a, b in zip(seen, seen[1:]):
            if a[0] == b[0] and (a[1] != b[1] or a[2] != b[2]):
                bad.append(f"uid {uid}: revision {a[0]} is {a[1]} restarts{', finished' * a[2]} to {a[5]} "
                           f"and {b[1]}{', finished' * b[2]} to {b[5]}")
            elif b[1] < a[1]:
                bad.append(f"uid {uid}: {a[5]} saw {a[1]} restarts at revision {a[0]}, {b[5]} {b[1]} at "
                           f"revision {b[0]}")
            elif a[2] and not b[2]:
                bad.append(f"uid {uid}: {a[5]} saw it finished at revision {a[0]}, {b[5]} active at "
                           f"revision {b[0]}")
    return bad[:50]


def check_reads_never_go_back(run):
    """A read that started after another ended never returns an older revision of a JobSet
    (reads, and the answers of creates, suspends and resumes, and the final List)."""
    bad = []
    for uid, seen in _states(run).items():
        reads = [o for o in seen if o[6]]
        ends = sorted(reads, key=lambda o: o[4])
        end_times = [o[4] for o in ends]
        newest = []  # prefix maxima of the revision over `ends`
        for o in ends:
            newest.append(max(newest[-1], (o[0], o)) if newest else (o[0], o))
        for o in reads:
            k = bisect.bisect_left(end_times, o[3])
            if k and newest[k - 1][0] > o[0]:
                before = newest[k - 1][1]
                bad.append(f"uid {uid}: {before[5]} returned revision {before[0]} by t={before[4]:.3f}, "
                           f"then {o[5]} begun at t={o[3]:.3f} returned revision {o[0]}")
    return bad[:50]


def _processes(stamps):
    """One JobSet's stamps -> {(pod uid, pid, first start t): {key, node, start, end, code}}, where
    key is the pod's identity within its JobSet (attempt, in-place attempt, ReplicatedJob, Job
    index, completion index) and end its last stamp."""
    procs = {}
    current = {}  # (pod, pid) -> the process's id
    for s in sorted(stamps, key=lambda s: s["t"]):
        ident = (s["pod"], s["pid"])
        if s["kind"] == "start" or ident not in current:
            current[ident] = (s["pod"], s["pid"], s["t"])
            procs[current[ident]] = {"key": (s["attempt"], s["inplace"], s["rjob"], s["job"], s["index"]),
                                     "node": s["node"], "start": s["t"], "end": s["t"], "code": None,
                                     "pod": s["pod"], "inplace": s["inplace"]}
        p = procs[current[ident]]
        p["end"] = max(p["end"], s["t"])
        if s["kind"] == "exit":
            p["code"] = s["code"]
    return list(procs.values())


def _frozen(run, node, t0, t1):
    """Whether `node`'s agent was frozen (SIGSTOP) during [t0, t1] (wall clock) or in the
    FROZEN_AFTER_S before: the case where overlap cannot be excluded (a frozen agent cannot
    stop its pods; once thawed it stops them at once), documented in docs/reliability.md."""
    return any(f.get("target") == node and f["kind"] == "agent_stop" and f["w0"] <= t1 and
               t0 <= f["w1"] + FROZEN_AFTER_S for f in run.faults)


def check_no_overlap(run):
    """No two processes of one pod identity (JobSet, attempt, in-place attempt, ReplicatedJob,
    Job index, completion index) run at once, but where the older one's agent was frozen."""
    bad = []
    for name, stamps in sorted(run.stamps.items()):
        by_key = collections.defaultdict(list)
        for p in _processes(stamps):
            by_key[p["key"]].append(p)
        for key, procs in by_key.items():
            procs.sort(key=lambda p: p["start"])
            for a, b in zip(procs, procs[1:]):
                overlap = a["end"] - b["start"]
                if overlap > OVERLAP_SLACK_S and not _frozen(run, a["node"], b["start"], a["end"]):
                    bad.append(f"{name} {key}: pod {a['pod']} on {a['node']} ran until {a['end']:.3f}, "
                               f"{overlap:.2f} s after pod {b['pod']} on {b['node']} started")
    return bad


def check_exits_reported(run):
    """Every pod of the final List whose process wrote its exit stamp ended with that code."""
    exits = {}
    for stamps in run.stamps.values():
        for p in _processes(stamps):
            if p["code"] is not None:
                exits[(p["pod"], p["inplace"])] = p["code"]
    bad = []
    for pod in run.final.get("pods", []):
        code = exits.get((pod["uid"], pod.get("inplace", "0")))
        if code is None or pod.get("exit_code") is None:
            continue
        if pod["exit_code"] != code:
            bad.append(f"pod {pod['name']} ({pod['uid']}): its process exited {code}, "
                       f"jobsetd recorded {pod['exit_code']} ({pod.get('phase')})")
    return bad


def check_no_partial_gang(run):
    """No attempt of a gang runs partly (some pods started, others not) longer than the bound:
    from its first pod's start to its last pod's start, or, if some never started, to the
    last stamp of those that did; and no pod of an attempt finishes its work (exit 0) while
    some of the attempt's pods never started."""
    bad = []
    for name, stamps in sorted(run.stamps.items()):
        pods = run.meta.get("pods", {}).get(name)
        if not pods or run.meta.get("phased", {}).get(name):
            continue  # unknown size, or pods that start in phases by design (dependsOn)
        attempts = collections.defaultdict(list)
        for p in _processes(stamps):
            attempts[(p["key"][0], p["key"][1])].append(p)
        for attempt, procs in sorted(attempts.items()):
            first = min(p["start"] for p in procs)
            started = {p["key"][2:] for p in procs}
            # In place, a pod that finished in an earlier in-place attempt is not run again.
            done = {p["key"][2:] for (a, ip), earlier in attempts.items() if a == attempt[0]
                    and int(ip) < int(attempt[1]) for p in earlier if p["code"] == 0}
            covered = started | done
            if len(covered) >= pods:  # from the first start to the last pod's first start
                spread = max(min(q["start"] for q in procs if q["key"][2:] == k) for k in started) - first
            else:  # some never started: as long as any of the others ran
                spread = max(p["end"] for p in procs) - first
            if spread > PARTIAL_GANG_BOUND_S:
                bad.append(f"{name} attempt {attempt}: {len(covered)} of {pods} pods started, partly "
                           f"running for {spread:.1f} s (bound {PARTIAL_GANG_BOUND_S:.0f} s)")
            elif len(covered) < pods and any(p["code"] == 0 for p in procs):
                bad.append(f"{name} attempt {attempt}: a pod finished its work (exit 0) while only "
                           f"{len(covered)} of {pods} pods ever started")
    return bad


def check_all_settled(run):
    """At the end every JobSet is finished, or suspended with no pod running."""
    bad = []
    for j in run.final["jobsets"]:
        if j["terminal"]:
            continue
        if j.get("suspend"):
            if j.get("active_pods"):
                bad.append(f"{j['name']}: suspended, {j['active_pods']} pods still active")
            continue
        bad.append(f"{j['name']}: neither finished nor suspended at the end ({j.get('phase', '?')}, "
                   f"{j['restarts']} restarts)")
    return bad


def check_watch_order(run):
    """Each watcher sees revisions in increasing order (but in the current state a watch from no
    revision starts with, as ADDED events in any order), each (JobSet, revision) once, and,
    once caught up at the end, every JobSet's final revision (a watch from no revision, after
    OUT_OF_RANGE, starts its memory over)."""
    bad = []
    by_watcher = collections.defaultdict(list)
    for w in run.watch:
        by_watcher[w["w"]].append(w)
    final = {j["name"]: j["rv"] for j in run.final["jobsets"]}
    for watcher, records in sorted(by_watcher.items()):
        last_rv = 0
        seen = set()
        latest = {}  # name -> last revision seen
        initial = False  # in the ADDED events a watch from no revision starts with, in any order
        for r in records:
            if r["op"] == "watch_open":
                if r.get("relist"):
                    seen, latest, last_rv, initial = set(), {}, 0, True
                continue
            if r["op"] != "watch":
                initial = False
                continue
            rv = int(r["rv"])
            initial = initial and r["type"] == "ADDED"
            if rv < last_rv and not initial:
                bad.append(f"watcher {watcher}: {r['name']} at revision {rv} after revision {last_rv}")
            if (r["name"], rv) in seen:
                bad.append(f"watcher {watcher}: {r['name']} at revision {rv} delivered twice")
            seen.add((r["name"], rv))
            last_rv = max(last_rv, rv)
            if r["type"] == "DELETED":
                latest.pop(r["name"], None)
            else:
                latest[r["name"]] = rv
        if not run.meta.get("watchers_caught_up", {}).get(str(watcher)):
            continue
        for name, rv in final.items():
            if latest.get(name) != int(rv):
                bad.append(f"watcher {watcher}: last saw {name} at revision {latest.get(name)}, "
                           f"the final List has {rv}")
    return bad[:50]


def check_nothing_left_behind(run):
    """No process or mount of the run outlives it."""
    return [f"left behind: {what}" for what in run.leftovers.get("processes", []) +
            run.leftovers.get("mounts", [])]


def check_no_unexpected_exits(run):
    """No jobsetd or agent exits on its own, but jobsetd where a fault may make it (a full disk,
    a failpoint, an etcd member down), and each exits 0 on SIGTERM at the end."""
    return [f"{e['who']} exited with {e['rc']} " + (f"at t={e['t']:.3f}" if "at" not in e else f"at {e['at']}")
            for e in run.exits if not e["expected"]]


def _longest_life(run):
    lives = collections.defaultdict(list)
    for s in run.samples:
        lives[s["pid"]].append(s["t"])
    return max((max(v) - min(v) for v in lives.values()), default=0.0)


def check_resources_flat(run):
    """jobsetd's RSS and open fds over the second half of its longest life (between two kills)
    grow no more than RSS_GROWTH_LIMIT and FD_SLACK. Lives under MIN_LIFE_S are too short to
    say (warm-up dominates): a soak that measures this keeps jobsetd alive (--faults without
    jobsetd_kill, disk_full and failpoint)."""
    lives = collections.defaultdict(list)
    for s in run.samples:
        lives[s["pid"]].append(s)
    if not lives:
        return []
    life = max(lives.values(), key=lambda v: v[-1]["t"] - v[0]["t"])
    if life[-1]["t"] - life[0]["t"] < MIN_LIFE_S:
        return []
    half = life[0]["t"] + (life[-1]["t"] - life[0]["t"]) / 2
    second = [s for s in life if s["t"] >= half]
    rss0 = max(s["rss_kb"] for s in second[:max(1, len(second) // 4)])
    rss1 = max(s["rss_kb"] for s in second[-max(1, len(second) // 4):])
    bad = []
    if rss1 > rss0 * (1 + RSS_GROWTH_LIMIT):
        bad.append(f"jobsetd pid {life[0]['pid']}: RSS {rss0} -> {rss1} KiB over the second half "
                   f"(+{100.0 * (rss1 - rss0) / rss0:.1f} %, limit {100 * RSS_GROWTH_LIMIT:.0f} %)")
    fd0, fd1 = second[0]["fds"], second[-1]["fds"]
    if fd1 > fd0 + FD_SLACK:
        bad.append(f"jobsetd pid {life[0]['pid']}: open fds {fd0} -> {fd1} over the second half")
    return bad


CHECKS = [
    ("acknowledged creates kept", check_acked_creates_kept),
    ("refused creates absent", check_refused_creates_absent),
    ("nothing unasked", check_nothing_unasked),
    ("one uid per name", check_one_uid_per_name),
    ("no resurrected deletes", check_no_resurrected_deletes),
    ("attempts never decrease", check_attempts_never_decrease),
    ("reads never go back", check_reads_never_go_back),
    ("no overlapping pods", check_no_overlap),
    ("exits reported", check_exits_reported),
    ("no partial gang", check_no_partial_gang),
    ("all settled", check_all_settled),
    ("watch order", check_watch_order),
    ("no unexpected exits", check_no_unexpected_exits),
    ("nothing left behind", check_nothing_left_behind),
    ("jobsetd RSS and fds flat", check_resources_flat),
]


def check(run):
    """[(invariant, [violation, ...])] in CHECKS' order."""
    return [(name, fn(run)) for name, fn in CHECKS]


def coverage(run):
    """What the checks had to look at: [(what, count)], printed with the verdicts so that a
    pass on too little material shows."""
    procs = [p for stamps in run.stamps.values() for p in _processes(stamps)]
    exits = {(p["pod"], p["inplace"]) for p in procs if p["code"] is not None}
    compared = sum(1 for p in run.final.get("pods", []) if (p["uid"], p.get("inplace", "0")) in exits
                   and p.get("exit_code") is not None)
    return [("acknowledged creates", len(_acked(run.calls, "create"))),
            ("acknowledged deletes", len(_acked(run.calls, "delete"))),
            ("JobSet states seen (reads, answers, watch events)", sum(len(v) for v in _states(run).values())),
            ("pod processes stamped", len(procs)),
            ("pod identities", len({(n, p["key"]) for n, st in run.stamps.items() for p in _processes(st)})),
            ("exit codes compared with jobsetd's", compared),
            ("JobSets in the final List", len(run.final["jobsets"])),
            ("watchers caught up at the end", sum(1 for v in run.meta.get("watchers_caught_up", {}).values() if v)),
            ("jobsetd samples", len(run.samples)),
            ("seconds of jobsetd's longest life", round(_longest_life(run), 1))]


def print_results(results):
    """One line per invariant, "PASS  name" or "FAIL  name: N violations", and the first ten
    violations of each under it."""
    for name, bad in results:
        print(f"{'PASS' if not bad else 'FAIL'}  {name}" + (f": {len(bad)} violations" if bad else ""))
        for b in bad[:10]:
            print(f"      {b}")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    run = load(argv[1])
    results = check(run)
    for what, count in coverage(run):
        print(f"      {count:>8}  {what}")
    print_results(results)
    return 1 if any(bad for _, bad in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
