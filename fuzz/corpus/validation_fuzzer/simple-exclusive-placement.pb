
jobset.x-k8s.io/v1alpha2JobSetl
exclusive-placementdefault*L
+alpha.jobset.sigs.k8s.io/exclusive-topologycloud.google.com/gke-nodepool"
V
workersdefault@>Indexed 
B-+
sleepbusyboxsleep"1000s	OnFailure 
All"Recreate*

AnyOrder