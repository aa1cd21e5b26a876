#!/bin/sh
# The entrypoint of the image tools/demo --containers builds (examples/containers.yaml):
# "trains" for $1 steps (the image's CMD, or the pod's args), saving a checkpoint under
# /checkpoints after each and resuming from it. On the first attempt worker 1 fails at
# step 3, so the JobSet restarts once. Only busybox sh builtins, cat, sleep and id: the
# image is busybox-static and nothing else.
steps=${1:-6}
me=${JOBSET_POD_HOSTNAME:?not run by jobsetd}
ckpt=/checkpoints/$me
step=0
[ -f "$ckpt" ] && read -r step <"$ckpt"
echo "$me: uid $(id -u), attempt ${JOBSET_RESTART_ATTEMPT:-?}, coordinator ${JOBSET_COORDINATOR:-none}," \
  "API token from the Secret: ${#API_TOKEN} characters, starting at step $step"
while [ "$step" -lt "$steps" ]; do
  step=$((step + 1))
  sleep 0.5
  echo "$step" >"$ckpt"
  echo "$me: step $step"
  if [ "$step" = 3 ] && [ "${JOBSET_RESTART_ATTEMPT:-0}" = 0 ] && [ "$me" = containers-workers-0-1 ]; then
    echo "$me: simulated failure"
    exit 1
  fi
done
echo "$me: done"
