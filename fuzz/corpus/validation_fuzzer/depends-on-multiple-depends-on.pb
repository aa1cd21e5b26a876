
jobset.x-k8s.io/v1alpha2JobSet
multiple-depends-ondefault"ö
ù
dataset-initializerdefault{yIndexedBnl_
initializerbusybox/bin/sh-c:echo 'dataset-initializer runs for 10 seconds' && sleep 10	OnFailure 
ô
model-initializerdefaultywIndexedBlj]
initializerbusybox/bin/sh-c8echo 'model-initializer runs for 10 seconds' && sleep 10	OnFailure 
¬
workerdefaultmkIndexedB\ZM
workerbusybox/bin/sh-c-echo 'worker runs for 20 seconds' && sleep 20	OnFailure *
dataset-initializerComplete*
model-initializerComplete
All*

AnyOrder