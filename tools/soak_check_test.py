#!/usr/bin/python3
"""tools/soak_check.py against recorded histories made up here: a clean one passes every
invariant, and each invariant catches a history that breaks it (and only that one)."""
import copy
import unittest

import soak_check as sc


def clean_run():
    """Two JobSets created, read, watched; a's gang of 2 ran attempt 0 and completed; b failed
    once, restarted and completed; a third was deleted."""
    calls = [
        {"op": "create", "w": 0, "name": "a", "res": "ok", "t0": 1.0, "t1": 1.1, "uid": "ua", "spec": "h1",
         "restarts": [0, 0], "terminal": False, "rv": "5"},
        {"op": "create", "w": 1, "name": "b", "res": "info", "code": "UNAVAILABLE", "t0": 1.0, "t1": 2.0},
        {"op": "create", "w": 1, "name": "b", "res": "ok", "t0": 2.1, "t1": 2.2, "uid": "ub", "spec": "h2",
         "restarts": [0, 0], "terminal": False, "rv": "6"},
        {"op": "create", "w": 1, "name": "c", "res": "ok", "t0": 2.3, "t1": 2.4, "uid": "uc", "spec": "h3",
         "restarts": [0, 0], "terminal": False, "rv": "7"},
        {"op": "get", "w": 0, "name": "b", "res": "ok", "t0": 3.0, "t1": 3.1, "uid": "ub", "restarts": [1, 0],
         "terminal": False, "rv": "9"},
        {"op": "delete", "w": 0, "name": "c", "res": "ok", "t0": 3.2, "t1": 3.3, "uid": "uc"},
        {"op": "list", "w": 1, "name": "*", "res": "ok", "t0": 4.0, "t1": 4.1, "items": [
            {"name": "a", "uid": "ua", "restarts": [0, 0], "terminal": True, "rv": "8"},
            {"name": "b", "uid": "ub", "restarts": [1, 0], "terminal": True, "rv": "10"}]},
    ]
    watch = [
        {"op": "watch_open", "w": 0, "from": "", "relist": True},
        {"op": "watch", "w": 0, "type": "ADDED", "name": "a", "uid": "ua", "rv": "5", "t": 1.2,
         "restarts": [0, 0], "terminal": False},
        {"op": "watch", "w": 0, "type": "ADDED", "name": "b", "uid": "ub", "rv": "6", "t": 2.3,
         "restarts": [0, 0], "terminal": False},
        {"op": "watch", "w": 0, "type": "MODIFIED", "name": "a", "uid": "ua", "rv": "8", "t": 3.5,
         "restarts": [0, 0], "terminal": True},
        {"op": "watch", "w": 0, "type": "MODIFIED", "name": "b", "uid": "ub", "rv": "10", "t": 3.9,
         "restarts": [1, 0], "terminal": True},
    ]

    def stamps(pod, node, attempt, job, start, end, code=0):
        out = [{"kind": "start", "t": start, "pod": pod, "node": node, "attempt": attempt, "inplace": "0",
                "rjob": "w", "job": job, "index": "0", "pid": "100", "code": None}]
        out.append({"kind": "exit", "t": end, "pod": pod, "node": node, "attempt": attempt, "inplace": "0",
                    "rjob": "w", "job": job, "index": "0", "pid": "100", "code": code})
        return out
    marks = {
        "a": stamps("pa0", "node-1", "0", "0", 100.0, 103.0) + stamps("pa1", "node-2", "0", "1", 100.2, 103.0),
        "b": stamps("pb0", "node-1", "0", "0", 101.0, 102.0, code=1) + stamps("pb1", "node-3", "1", "0", 104.0, 106.0),
    }
    final = {"t": 10.0, "jobsets": [
        {"name": "a", "uid": "ua", "rv": "8", "spec": "h1", "restarts": [0, 0], "terminal": True, "suspend": False},
        {"name": "b", "uid": "ub", "rv": "10", "spec": "h2", "restarts": [1, 0], "terminal": True, "suspend": False}],
        "pods": [{"name": "a-w-0-0", "uid": "pa0", "phase": "Succeeded", "exit_code": 0, "inplace": "0"},
                 {"name": "b-w-0-0", "uid": "pb1", "phase": "Succeeded", "exit_code": 0, "inplace": "0"}]}
    samples = [{"op": "sample", "pid": 7, "rss_kb": 50000, "fds": 40, "t": float(t)} for t in range(0, 1200, 10)]
    meta = {"pods": {"a": 2, "b": 1}, "watchers_caught_up": {"0": True}}
    return sc.Run(calls, watch, [], samples, final, marks, {}, meta, [])


def failing(run):
    return sorted(name for name, bad in sc.check(run) if bad)


class CheckerTest(unittest.TestCase):
    def test_a_clean_run_passes_everything(self):
        self.assertEqual(failing(clean_run()), [])

    def test_a_lost_create(self):
        run = clean_run()
        run.final["jobsets"].pop(0)
        self.assertEqual(failing(run), ["acknowledged creates kept"])

    def test_an_altered_spec(self):
        run = clean_run()
        run.final["jobsets"][0]["spec"] = "other"
        self.assertEqual(failing(run), ["acknowledged creates kept"])

    def test_a_refused_create_that_landed(self):
        run = clean_run()
        run.calls[0]["res"], run.calls[0]["code"] = "fail", "INVALID_ARGUMENT"
        self.assertIn("refused creates absent", failing(run))

    def test_something_never_asked_for(self):
        run = clean_run()
        run.final["jobsets"].append({"name": "z", "uid": "uz", "rv": "11", "spec": "h", "restarts": [0, 0],
                                     "terminal": True})
        self.assertIn("nothing unasked", failing(run))

    def test_a_retry_that_made_a_second_jobset(self):
        run = clean_run()
        run.calls[4]["uid"] = "ub2"
        self.assertIn("one uid per name", failing(run))

    def test_a_resurrected_delete(self):
        run = clean_run()
        run.calls.append({"op": "get", "w": 1, "name": "c", "res": "ok", "t0": 5.0, "t1": 5.1, "uid": "uc",
                          "restarts": [0, 0], "terminal": False, "rv": "12"})
        self.assertIn("no resurrected deletes", failing(run))

    def test_attempts_going_backwards(self):
        run = clean_run()
        run.final["jobsets"][1]["restarts"] = [0, 0]
        self.assertEqual(failing(run), ["attempts never decrease"])

    def test_a_finished_jobset_active_again(self):
        run = clean_run()
        run.final["jobsets"][0]["terminal"] = False
        self.assertIn("attempts never decrease", failing(run))

    def test_a_stale_read(self):
        run = clean_run()
        run.calls.append({"op": "get", "w": 1, "name": "b", "res": "ok", "t0": 4.2, "t1": 4.3, "uid": "ub",
                          "restarts": [0, 0], "terminal": False, "rv": "6"})
        self.assertEqual(failing(run), ["reads never go back"])

    def test_a_relist_starts_in_any_order(self):
        run = clean_run()
        run.watch += [{"op": "watch_break", "w": 0, "code": "OUT_OF_RANGE"},
                      {"op": "watch_open", "w": 0, "from": "", "relist": True}]
        run.watch += [dict(e, type="ADDED") for e in (run.watch[4], run.watch[3])]
        self.assertEqual(failing(run), [])

    def test_two_processes_of_one_pod_at_once(self):
        run = clean_run()
        run.stamps["a"].append({"kind": "start", "t": 101.0, "pod": "pa0x", "node": "node-4", "attempt": "0",
                                "inplace": "0", "rjob": "w", "job": "0", "index": "0", "pid": "5", "code": None})
        self.assertEqual(failing(run), ["no overlapping pods"])
        # Unless the first one's agent was frozen then.
        run.faults.append({"kind": "agent_stop", "target": "node-1", "w0": 100.5, "w1": 101.5})
        self.assertEqual(failing(run), [])

    def test_an_exit_code_recorded_wrong(self):
        run = clean_run()
        run.final["pods"][0]["exit_code"] = 1
        self.assertEqual(failing(run), ["exits reported"])

    def test_a_gang_partly_running(self):
        run = clean_run()
        for s in run.stamps["a"]:
            if s["pod"] == "pa1":
                s["t"] += 60
        self.assertEqual(failing(run), ["no partial gang"])

    def test_a_gang_finishing_partly(self):
        run = clean_run()
        run.stamps["a"] = [s for s in run.stamps["a"] if s["pod"] != "pa1"]
        self.assertEqual(failing(run), ["no partial gang"])

    def test_a_jobset_stuck(self):
        run = clean_run()
        run.final["jobsets"][1]["terminal"] = False
        self.assertIn("all settled", failing(run))

    def test_watch_out_of_order_or_twice(self):
        run = clean_run()
        run.watch[3], run.watch[4] = run.watch[4], run.watch[3]
        self.assertEqual(failing(run), ["watch order"])
        run = clean_run()
        run.watch.append(copy.deepcopy(run.watch[4]))
        self.assertEqual(failing(run), ["watch order"])

    def test_watch_missing_the_last_revision(self):
        run = clean_run()
        del run.watch[4]
        self.assertEqual(failing(run), ["watch order"])

    def test_leftovers(self):
        run = clean_run()
        run.leftovers = {"processes": ["pid 9: sleep 3600"], "mounts": []}
        self.assertEqual(failing(run), ["nothing left behind"])

    def test_an_unexpected_exit(self):
        run = clean_run()
        run.exits.append({"who": "node-2", "rc": -11, "expected": False, "t": 5.0})
        self.assertEqual(failing(run), ["no unexpected exits"])

    def test_memory_growth(self):
        run = clean_run()
        for s in run.samples:
            s["rss_kb"] += int(s["t"]) * 1000
        self.assertEqual(failing(run), ["jobsetd RSS and fds flat"])


if __name__ == "__main__":
    unittest.main()
