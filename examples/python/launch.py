#!/usr/bin/env python3
"""Launch a JobSet on jobsetd and wait for it: a launcher to copy.

    PYTHONPATH=python:bazel-bin/python examples/python/launch.py \
        examples/leader-workers.yaml --server 127.0.0.1:7070 --timeout 3600

Applies the manifest, waits until every JobSet in it is Completed (or has
Failed), prints each one's status, and exits 0 only when all completed.
"""

import argparse
import logging
import sys

import jobset


def describe(client, js):
    """Prints a JobSet's state and the counts of its replicated jobs."""
    status = js.status
    print(f"jobset {js.metadata.name}: "
          f"{status.terminal_state or 'Active'}, restarts {status.restarts}")
    for rj in status.replicated_jobs_status:
        print(f"  {rj.name}: ready {rj.ready} active {rj.active} "
              f"succeeded {rj.succeeded} failed {rj.failed}")
    for c in status.conditions:
        if c.status == "True":
            print(f"  condition {c.type}: {c.reason} {c.message}")
    for pod in client.list_pods(js.metadata.name, js.metadata.namespace):
        print(f"  pod {pod.metadata.name} on {pod.spec.node_name or '<none>'}:"
              f" {pod.status.phase or 'Pending'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", help="JobSet YAML or JSON file")
    parser.add_argument("--config", default=None,
                        help="client config file (default $JOBSETCONFIG, "
                             "else ~/.config/jobset/config), as jobsetctl's")
    parser.add_argument("--server", default=None,
                        help="jobsetd address, overriding the config's")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds to wait for completion")
    args = parser.parse_args()
    logging.basicConfig(format="warning: %(message)s")

    try:
        client = jobset.Client.from_config(args.config, server=args.server,
                                           namespace=args.namespace)
    except jobset.ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with client:
        try:
            results = client.apply(args.manifest)
        except (jobset.ManifestError, jobset.ApiError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        ok = True
        for result in results:
            print(f"jobset {result.name} {result.action}")
        for result in results:
            try:
                js = client.wait(result.name, "Completed", args.timeout)
            except jobset.ConditionNotMetError as e:
                print(f"error: {e}", file=sys.stderr)
                js, ok = e.jobset, False
            except jobset.WaitTimeoutError as e:
                print(f"error: {e}", file=sys.stderr)
                js, ok = client.get(result.name), False
            if js is not None:
                describe(client, js)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
