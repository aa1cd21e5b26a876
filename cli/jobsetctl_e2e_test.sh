#!/usr/bin/env bash
# jobsetctl against a real jobsetd on 127.0.0.1 (a port chosen at run time):
# apply an upstream manifest, get, describe, suspend/resume, wait, delete,
# rejected manifests and an unreachable server. There are no agents, so pods
# stay pending; a Job's activeDeadlineSeconds makes a JobSet fail for wait.
# Usage: jobsetctl_e2e_test.sh JOBSETCTL JOBSETD UPSTREAM_MANIFEST
set -uo pipefail

jobsetctl=$(realpath "$1")
jobsetd=$(realpath "$2")
manifest=$(realpath "$3")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# start_jobsetd, run, expect, expect_not (the runfiles root is the cwd).
source cli/e2e_helpers.sh || exit 1
start_jobsetd "$jobsetd"

# Apply, idempotently, then changed.
run 0 apply -f "$manifest"
expect out "jobset.jobset.x-k8s.io/success-policy created"
run 0 apply -f "$manifest"
expect out "jobset.jobset.x-k8s.io/success-policy unchanged"
sed 's/^  name: success-policy$/  name: success-policy\n  labels:\n    team: ml/' \
  "$manifest" >"$tmp/labelled.yaml"
run 0 apply -f "$tmp/labelled.yaml" --dry-run
expect out "success-policy configured (dry run)"
run 0 apply -f - <"$tmp/labelled.yaml"
expect out "success-policy configured"
run 0 apply -f - <"$tmp/labelled.yaml"
expect out "success-policy unchanged"

# get in every shape.
run 0 get jobsets
expect out "NAME             TERMINALSTATE   RESTARTS   COMPLETED   SUSPENDED   AGE"
expect out "success-policy"
run 0 get jobset success-policy -o json
expect out '"apiVersion": "jobset.x-k8s.io/v1alpha2"'
expect out '"kind": "JobSet"'
expect out '"replicatedJobs": ['
expect out '"team": "ml"'
run 0 get js success-policy -o yaml
expect out "kind: JobSet"
expect out "  targetReplicatedJobs:"
run 0 get jobsets -o name
expect out "jobset.jobset.x-k8s.io/success-policy"

# The controller creates Jobs and pods shortly after.
for _ in $(seq 1 100); do
  "$jobsetctl" get pods --jobset success-policy 2>/dev/null |
    grep -q success-policy-workers && break
  sleep 0.1
done
run 0 get jobs --jobset success-policy
expect out "success-policy-workers-0"
run 0 get pods --jobset success-policy
expect out "NAME"
expect out "READY"
expect out "success-policy-leader-0-0"
[ "$(head -1 <<<"$out" | tr -s ' ')" = "NAME READY STATUS RESTARTS AGE" ] ||
  { echo "FAIL: get pods header: $(head -1 <<<"$out")"; failures=$((failures + 1)); }
run 0 get pods --jobset success-policy -o wide
expect out "NOMINATED NODE"
expect out "<none>"
run 0 get pods -o json
expect out '"kind": "Pod"'
# No agent joins this jobsetd: no nodes, as kubectl words it.
run 0 get nodes
expect err "No resources found"
run 0 get nodes -o json
expect out '"kind": "List"'
expect out '"items": []'
run 1 get nodes node-x
expect err 'not found'
run 1 describe node node-x
expect err 'not found'
run 0 get events --jobset success-policy
expect out "FailedScheduling"
run 0 describe jobset success-policy
expect out "Name:           success-policy"
expect out "Replicated Jobs:"
expect out "Pending:"
expect out "Events:"

# Suspend and resume.
run 0 suspend jobset success-policy
expect out "jobset.jobset.x-k8s.io/success-policy suspended"
run 0 get jobsets success-policy
expect out "true"
run 0 resume jobset success-policy
expect out "resumed"

# get -w lists, then streams until --timeout.
run 0 get jobsets -w --timeout=1s
expect out "success-policy"

# wait: timeout, met, and the other terminal condition.
run 4 wait jobset success-policy --for=condition=Completed --timeout=1s
expect err "timed out"
cat >"$tmp/deadline.yaml" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: deadline
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        activeDeadlineSeconds: 1
        template:
          spec:
            containers:
            - name: main
              image: bash
              command: ["true"]
YAML
run 0 apply -f "$tmp/deadline.yaml"
run 0 wait jobset deadline --for=condition=Failed --timeout=30s
expect out "jobset.jobset.x-k8s.io/deadline condition met"
run 5 wait jobset deadline --for=condition=Completed --timeout=30s
expect err "cannot be met"
run 1 wait jobset missing --for=condition=Completed --timeout=1s
expect err "not found"

# Namespaces.
run 0 -n team apply -f "$manifest"
expect out "created"
run 0 get jobsets -n team -o name
expect out "success-policy"

# The kubectl one-liners, with jobsetctl in kubectl's place.
run 0 get jobsets -o jsonpath='{.items[*].metadata.name}'
expect out "success-policy"
expect out "deadline"
run 0 get jobsets -l team=ml -o name
expect out "jobset.jobset.x-k8s.io/success-policy"
expect_not out "deadline"
run 0 get jobsets --selector 'team in (ml,web)' -o jsonpath='{.items[0].metadata.labels.team}'
[ "$out" = "ml" ] || { echo "FAIL: -l in (...): '$out'"; failures=$((failures + 1)); }
run 0 get jobsets -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'
expect out "default/success-policy"
expect out "team/success-policy"
run 0 get jobsets --all-namespaces
expect out "NAMESPACE"
expect out "team"
run 0 get jobsets --field-selector metadata.name=deadline -o name
[ "$out" = "jobset.jobset.x-k8s.io/deadline" ] || { echo "FAIL: --field-selector: '$out'"; failures=$((failures + 1)); }
run 0 get jobset deadline -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}'
[ "$out" = "True" ] || { echo "FAIL: condition filter: '$out'"; failures=$((failures + 1)); }
for _ in $(seq 1 100); do
  "$jobsetctl" get pods --jobset success-policy -o name 2>/dev/null |
    grep -q success-policy-leader && break
  sleep 0.1
done
run 0 get pods --field-selector status.phase=Pending -o name
expect out "pod/success-policy-leader-0-0"
run 0 get pods --field-selector status.phase!=Pending,spec.nodeName= -o name
expect_not out "pod/success-policy-leader-0-0"
run 0 get pods -o jsonpath='{.items[?(@.status.phase=="Pending")].metadata.name}'
expect out "success-policy-leader-0-0"
run 1 get pods --field-selector spec.bogus=x
expect err "field label not supported: spec.bogus"
run 1 get jobsets -o 'jsonpath={.items['
expect err "error parsing jsonpath {.items["
run 0 get pods -A
expect out "NAMESPACE"
run 0 get jobs -o name
expect out "job.batch/success-policy-workers-0"
run 0 get events -o name
expect out "event/"
run 0 get pods -w --timeout=2s -o name
expect out "pod/success-policy-leader-0-0"
run 0 get events -w --timeout=1s
expect out "FailedScheduling"
run 0 version
expect out "Client Version: v0.1.0"
expect out "Server Version: v0.1.0"
run 0 version -o json
expect out '"serverVersion": {'
run 0 --server=127.0.0.1:1 version --client
expect out "Client Version: v0.1.0"
"$jobsetctl" completion bash | bash -n || { echo "FAIL: completion bash"; failures=$((failures + 1)); }
# delete -f, --all and -l.
run 0 delete -f "$tmp/deadline.yaml"
expect out "jobset.jobset.x-k8s.io \"deadline\" deleted"
run 0 -n labelled apply -f "$tmp/labelled.yaml"
run 0 -n labelled delete jobsets -l team=web
expect err "No resources found"
run 0 -n labelled delete jobsets -l team=ml
expect out "jobset.jobset.x-k8s.io \"success-policy\" deleted"
run 0 delete jobsets --all -n team
expect out "jobset.jobset.x-k8s.io \"success-policy\" deleted"
run 0 get jobsets -n team -o name
[ -z "$out" ] || { echo "FAIL: delete --all left: $out"; failures=$((failures + 1)); }
run 0 get jobset success-policy -o name
expect out "success-policy"

# Delete.
run 0 delete jobset success-policy
expect out "jobset.jobset.x-k8s.io \"success-policy\" deleted"
run 1 get jobset success-policy
expect err "not found"

# Rejected manifests: the field path, a non-zero exit, nothing created.
cat >"$tmp/bad.yaml" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: bad
spec:
  replicatedJobs:
  - name: workers
    replicas: -1
    template:
      spec:
        template:
          spec:
            containers:
            - name: main
              image: bash
YAML
run 1 apply -f "$tmp/bad.yaml"
expect err "spec.replicatedJobs[0].replicas"
sed 's/replicatedJobs:/replicatedJob:/' "$tmp/bad.yaml" >"$tmp/typo.yaml"
run 1 apply -f "$tmp/typo.yaml"
expect err 'spec.replicatedJob: unknown field (did you mean "replicatedJobs"?)'
run 1 get jobset bad
expect err "not found"

# Usage errors and an unreachable server.
run 2 get jobsets --bogus
expect err "unknown flag: --bogus"
run 2 get widgets
expect err "unknown resource type"
run 0 describe --help
expect out "Usage: jobsetctl describe jobset|node|secret|configmap|KUEUE-KIND NAME"
# An unreachable server is tried again (a failover) until the timeout.
run 3 --server=127.0.0.1:1 --request-timeout=2s get jobsets
expect err "cannot reach jobsetd at 127.0.0.1:1"
expect err "the next past the 2s timeout"
# A token is never sent in plaintext: http:// with admin.conf's token is
# refused before anything is sent; a bare host:port means TLS.
run 1 --server="http://$address" auth whoami
expect err "a bearer token is only sent over TLS"
run 0 --server="$address" auth whoami
run 1 logs some-pod
expect err "pod \"some-pod\" not found"

# Users, tokens and RBAC, as an administrator sets up a team.
run 0 create token alice --groups=team-a
alice=$out
[ -n "$alice" ] || { echo "FAIL: create token printed nothing"; failures=$((failures + 1)); }
run 0 get tokens
expect out "alice"
cat >"$tmp/rbac.yaml" <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: team-a-view
  namespace: team-a
subjects:
- kind: Group
  name: team-a
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: ClusterRole
  name: view
  apiGroup: rbac.authorization.k8s.io
YAML
run 0 apply -f "$tmp/rbac.yaml"
run 0 get rolebindings -n team-a
expect out "team-a-view"
run 0 --token="$alice" auth can-i list jobsets -n team-a
expect out "yes"
run 1 --token="$alice" auth can-i create jobsets -n team-a
expect out "no"
run 1 --token="$alice" apply -f "$manifest" -n team-a
expect err 'User "alice" cannot create resource "jobsets" in API group "jobset.x-k8s.io" in the namespace "team-a"'
run 1 --token="$alice" get jobsets -n team-b
expect err 'cannot list resource "jobsets"'
run 1 --token=abcdefgh.0123456789abcdefghijklmnopqrstuv get jobsets
expect err "invalid or expired token"
# Secrets and ConfigMaps: in one file with a JobSet, Kubernetes' YAML
# unchanged; view (alice) reads ConfigMaps and not Secrets.
cat >"$tmp/config.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: db
type: kubernetes.io/basic-auth
data:
  username: YWRtaW4=
stringData:
  password: hunter2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
binaryData:
  blob: AAEC
YAML
run 0 apply -f "$tmp/config.yaml" -n team-a
expect out "secret/db created"
expect out "configmap/settings created"
run 0 apply -f "$tmp/config.yaml" -n team-a
expect out "secret/db unchanged"
run 0 get secrets -n team-a
expect out "NAME   TYPE                       DATA   AGE"
expect out "db     kubernetes.io/basic-auth   2"
run 0 get secret db -n team-a -o yaml
expect out "password: aHVudGVyMg=="
run 0 describe secret db -n team-a
expect out "password:  7 bytes"
expect_not out "hunter2"
run 0 get cm -n team-a -o name
expect out "configmap/settings"
run 0 --token="$alice" get configmap settings -n team-a -o json
expect out '"mode": "fast"'
run 1 --token="$alice" get secret db -n team-a
expect err 'secrets "db" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "team-a"'
run 1 --token="$alice" get secrets -n team-a
expect err 'cannot list resource "secrets"'
run 1 --token="$alice" create configmap mine --from-literal=a=b -n team-a
expect err 'cannot create resource "configmaps"'
sed 's/name: db/name: bad/; s/username: YWRtaW4=/username: "not base64!"/' "$tmp/config.yaml" >"$tmp/bad-secret.yaml"
run 1 apply -f "$tmp/bad-secret.yaml" -n team-a
expect err 'data[username]: Invalid value: illegal base64 data at input byte 3'
run 0 create secret generic api -n team-a --from-literal=token=s3cr3t --from-literal=user=me
expect out "secret/api created"
run 1 create secret generic api -n team-a --from-literal=token=x
expect err 'secrets "api" already exists'
run 1 create secret generic bad -n team-a --from-literal=bad/key=x
expect err '--from-literal=bad/key=x: "bad/key" is not a valid key name for a Secret'
printf 'a=1\n' >"$tmp/app.properties"
run 0 create configmap files -n team-a --from-file="$tmp/app.properties" --from-file=renamed="$tmp/app.properties"
expect out "configmap/files created"
run 0 get configmap files -n team-a -o jsonpath='{.data.renamed}'
expect out "a=1"
run 1 create configmap nofile -n team-a --from-file="$tmp/missing"
expect err "--from-file=$tmp/missing: cannot read"
run 0 create secret docker-registry regcred -n team-a --docker-server=r.example.com --docker-username=u --docker-password=p
expect out "secret/regcred created"
run 0 get secret regcred -n team-a -o jsonpath='{.type}'
expect out "kubernetes.io/dockerconfigjson"
run 2 create secret docker-registry regcred2 -n team-a --docker-server=r.example.com
expect err "--docker-username, --docker-password and --docker-server is required"
run 0 delete secret api -n team-a
expect out 'secret "api" deleted'
run 0 delete -f "$tmp/config.yaml" -n team-a
expect out 'secret "db" deleted'
expect out 'configmap "settings" deleted'
run 1 get secret db -n team-a
expect err 'secrets "db" not found'
if grep -qF hunter2 "$tmp/jobsetd.out" "$tmp/jobsetd.err"; then
  echo "FAIL: a Secret's value is in jobsetd's output"; failures=$((failures + 1))
fi
# version needs an authenticated caller, no role.
run 0 --token="$alice" version
expect out "Server Version: v0.1.0"
run 1 --token=abcdefgh.0123456789abcdefghijklmnopqrstuv version
expect out "Client Version: v0.1.0"
expect err "invalid or expired token"
run 0 delete token alice
run 1 --token="$alice" get jobsets -n team-a
expect err "invalid or expired token"
# Pod Security admission and v1 Namespace objects: a Namespace labelled
# restricted refuses a JobSet that baseline (jobsetd's default) admits, with
# Kubernetes' message; baseline refuses hostPath; privileged admits it.
# namespace_yaml NAME MODE LEVEL: a v1 Namespace with one pod-security label.
namespace_yaml() {
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n' "$1"
  printf '    pod-security.kubernetes.io/%s: %s\n' "$2" "$3"
}
namespace_yaml secure enforce restricted >"$tmp/ns.yaml"
echo '    pod-security.kubernetes.io/enforce-version: latest' >>"$tmp/ns.yaml"
run 0 apply -f "$tmp/ns.yaml"
expect out "namespace/secure created"
run 0 apply -f "$tmp/ns.yaml"
expect out "namespace/secure unchanged"
run 1 create -f "$tmp/ns.yaml"
expect err 'namespaces "secure" already exists'
run 0 get namespaces
expect out "NAME     STATUS   AGE"
expect out "secure   Active"
run 0 get ns secure -o json
expect out '"pod-security.kubernetes.io/enforce": "restricted"'
run 1 apply -f "$manifest" -n secure
expect err 'is forbidden: spec.replicatedJobs[0].template.spec.template: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container'
expect err 'runAsNonRoot != true (pod or container'
sed 's/enforce: restricted/enforce: strict/' "$tmp/ns.yaml" >"$tmp/bad-ns.yaml"
run 1 apply -f "$tmp/bad-ns.yaml"
expect err 'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted'
cat >"$tmp/hostpath.yaml" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: hostdata
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            volumes:
            - name: data
              hostPath:
                path: /srv/data
            containers:
            - name: c
              image: busybox
              command: ["true"]
YAML
run 1 apply -f "$tmp/hostpath.yaml"
expect err 'violates PodSecurity "baseline:latest": hostPath volumes (volume "data")'
namespace_yaml lab enforce privileged >"$tmp/lab.yaml"
run 0 apply -f "$tmp/lab.yaml"
run 0 apply -f "$tmp/hostpath.yaml" -n lab
expect out "jobset.jobset.x-k8s.io/hostdata created"
run 0 delete jobset hostdata -n lab
run 0 delete namespace secure
expect out 'namespace "secure" deleted'
run 1 get ns secure
expect err 'namespaces "secure" not found'
run 0 delete -f "$tmp/lab.yaml"
expect out 'namespace "lab" deleted'
# warn: the JobSet is created, and jobsetctl prints the server's warning.
namespace_yaml watched warn restricted >"$tmp/watched.yaml"
run 0 apply -f "$tmp/watched.yaml"
run 0 apply -f "$manifest" -n watched
expect out "jobset.jobset.x-k8s.io/success-policy created"
expect err 'Warning: jobset.jobset.x-k8s.io/success-policy: spec.replicatedJobs[0].template.spec.template: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false'
run 0 delete jobset success-policy -n watched

# A client that trusts another CA refuses the server and never sends its token.
if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=other \
  -days 1 -keyout "$tmp/other.key" -out "$tmp/other.crt" 2>/dev/null; then
  sed 's/certificate-authority-data: .*/certificate-authority-data: '"$(base64 -w0 <"$tmp/other.crt")"'/' \
    "$tmp/data/admin.conf" >"$tmp/wrong-ca.conf"
  chmod 600 "$tmp/wrong-ca.conf"
  run 3 --config="$tmp/wrong-ca.conf" get jobsets
  expect err "cannot reach jobsetd"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
