
jobset.x-k8s.io/v1alpha2JobSet

depends-on"è
n
initializer_]B[YW
initializerbusybox/bin/sh-c2echo 'initializer runs for 10 seconds' && sleep 10
~
launcherYWBUSQ
launcherbusybox/bin/sh-c/echo 'launcher runs for 20 seconds' && sleep 20*
initializerComplete
v
workerYWBQOM
workerbusybox/bin/sh-c-echo 'worker runs for 20 seconds' && sleep 20*
launcherReady