#!/usr/bin/env bash
# tools/install into a scratch destdir and prefix and back out to nothing, with stand-in
# binaries (no Bazel inside Bazel): the files, their modes, the units' contents (and
# systemd-analyze verify where it exists), flag files kept when edited, completion installed
# or skipped, hostile arguments and manifests refused; then the Python client from the
# wheel tools/install built and from `pip install ./python`, each into a scratch venv
# (--system-site-packages) and imported from another folder. Run from the runfiles root.
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp/home PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
mkdir -p "$HOME"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
expect_contains() { # FILE TEXT
  grep -qF -- "$2" "$1" || fail "$1 lacks '$2'"
}
expect_line() { # FILE LINE
  grep -qxF -- "$2" "$1" || fail "$1 lacks the line '$2'"
}

# A bazel-bin-shaped tree of stand-ins; jobsetctl prints completion scripts.
built=$tmp/built
mkdir -p "$built"/{scheduler,agent/runtime,cli,python}
for b in scheduler/jobsetd agent/jobset-agent agent/runtime/jobset-pod-shim; do
  printf '#!/bin/sh\necho %s\n' "$b" >"$built/$b"
  chmod 0755 "$built/$b"
done
cat >"$built/cli/jobsetctl" <<'CTL'
#!/bin/sh
[ "$1" = completion ] && [ "$2" = bash -o "$2" = zsh ] && { echo "# $2 completion for jobsetctl"; exit 0; }
echo "unknown command" >&2
exit 1
CTL
chmod 0755 "$built/cli/jobsetctl"
cp -rL "$root/python/proto" "$built/python/proto"

install_cmd() { "$root/tools/install" "$@" >"$tmp/out" 2>&1; }
files_under() { (cd "$1" && find . -mindepth 1 \( -type f -o -type l \) -printf '%m %p\n' | sort); }

# --- Install into a destdir.
dest=$tmp/dest
install_cmd --destdir="$dest" --from="$built" || { cat "$tmp/out"; fail "install failed"; }
wheel_name=jobset-0.1.0-py3-none-any.whl
python_ok=1
/usr/bin/python3 -c 'import setuptools, wheel, pip' 2>/dev/null || python_ok=0
want="644 ./etc/jobset/agent.env
644 ./etc/jobset/jobsetd.env
644 ./usr/local/lib/systemd/system/jobset-agent.service
644 ./usr/local/lib/systemd/system/jobsetd.service
644 ./usr/local/share/bash-completion/completions/jobsetctl
644 ./usr/local/share/jobset/install-manifest
$([ $python_ok = 1 ] && echo "644 ./usr/local/share/jobset/python/$wheel_name")
644 ./usr/local/share/zsh/site-functions/_jobsetctl
755 ./usr/local/bin/jobset-agent
755 ./usr/local/bin/jobset-pod-shim
755 ./usr/local/bin/jobsetctl
755 ./usr/local/bin/jobsetd"
got=$(files_under "$dest")
[ "$got" = "$(echo "$want" | sed '/^$/d' | sort)" ] || fail "installed files:
$got
want:
$want"
cmp -s "$dest/usr/local/bin/jobset-pod-shim" "$built/agent/runtime/jobset-pod-shim" ||
  fail "jobset-pod-shim is not the built one"
# The agent looks for jobset-pod-shim next to itself.
[ -x "$dest/usr/local/bin/jobset-pod-shim" ] || fail "jobset-pod-shim is not beside jobset-agent"
unit=$dest/usr/local/lib/systemd/system/jobsetd.service
expect_line "$unit" 'ExecStart=/usr/local/bin/jobsetd $JOBSETD_FLAGS'
expect_line "$unit" 'EnvironmentFile=/etc/jobset/jobsetd.env'
expect_line "$unit" 'WantedBy=multi-user.target'
grep -q '^KillMode' "$unit" && fail "$unit: jobsetd should be stopped whole"
unit=$dest/usr/local/lib/systemd/system/jobset-agent.service
expect_line "$unit" 'ExecStart=/usr/local/bin/jobset-agent $JOBSET_AGENT_FLAGS'
expect_line "$unit" 'EnvironmentFile=/etc/jobset/agent.env'
expect_line "$unit" 'KillMode=process'
grep -q '@[A-Z]*@' "$dest"/usr/local/lib/systemd/system/* && fail "a unit still has a @PLACEHOLDER@"
expect_contains "$dest/etc/jobset/jobsetd.env" 'JOBSETD_FLAGS=--listen=0.0.0.0:7070 --data_dir=/var/lib/jobsetd'
expect_contains "$dest/etc/jobset/agent.env" '--join_token_file=/etc/jobset/join-token'
expect_contains "$dest/usr/local/share/bash-completion/completions/jobsetctl" '# bash completion for jobsetctl'
expect_contains "$dest/usr/local/share/zsh/site-functions/_jobsetctl" '# zsh completion for jobsetctl'
expect_contains "$tmp/out" 'systemctl daemon-reload && systemctl enable --now jobsetd'
grep -q '^== systemctl' "$tmp/out" && fail "install enabled a unit without --enable"

# Installing again over it gives the same files.
install_cmd --destdir="$dest" --from="$built" || { cat "$tmp/out"; fail "reinstall failed"; }
[ "$(files_under "$dest")" = "$got" ] || fail "a second install changed the file set"

# --- Uninstall leaves the destdir empty.
install_cmd --uninstall --destdir="$dest" || { cat "$tmp/out"; fail "uninstall failed"; }
[ -z "$(find "$dest" -mindepth 1)" ] || fail "uninstall left: $(find "$dest" -mindepth 1)"
install_cmd --uninstall --destdir="$dest" && fail "a second uninstall succeeded"
expect_contains "$tmp/out" 'nothing to uninstall'

# An edited flag file survives both a reinstall and the uninstall; nothing else does.
install_cmd --destdir="$dest" --from="$built" || fail "install failed"
echo 'JOBSET_AGENT_FLAGS=--scheduler=mine:7070' >"$dest/etc/jobset/agent.env"
install_cmd --destdir="$dest" --from="$built" || fail "reinstall failed"
expect_contains "$tmp/out" "kept $dest/etc/jobset/agent.env (changed since it was installed)"
expect_contains "$tmp/out" 'agent.env exists: left as it is'
expect_contains "$dest/etc/jobset/agent.env" 'mine:7070'
install_cmd --uninstall --destdir="$dest" || fail "uninstall failed"
[ "$(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')" = "./etc ./etc/jobset ./etc/jobset/agent.env " ] ||
  fail "uninstall with an edited agent.env left: $(find "$dest" -mindepth 1)"
rm -rf "$dest"

# --- A jobsetctl without `completion` installs everything else.
cp -r "$built" "$tmp/old"
printf '#!/bin/sh\necho "unknown command \\"$1\\"" >&2\nexit 1\n' >"$tmp/old/cli/jobsetctl"
install_cmd --destdir="$dest" --from="$tmp/old" || { cat "$tmp/out"; fail "install without completion failed"; }
expect_contains "$tmp/out" 'bash completion skipped'
[ -e "$dest/usr/local/share/bash-completion" ] && fail "completion installed from a jobsetctl without it"
[ -x "$dest/usr/local/bin/jobsetctl" ] || fail "jobsetctl not installed"
install_cmd --uninstall --destdir="$dest" || fail "uninstall failed"
[ -z "$(find "$dest" -mindepth 1)" ] || fail "uninstall left: $(find "$dest" -mindepth 1)"

# --- Hostile input: refused with a message naming what is wrong, nothing written.
check_refused() { # WANT ARGS...
  local want=$1
  shift
  if install_cmd "$@"; then
    fail "tools/install $* succeeded"
  else
    expect_contains "$tmp/out" "$want"
  fi
}
check_refused "unknown argument '--bogus'" --bogus --destdir="$dest" --from="$built"
check_refused "--prefix must be an absolute path, got 'usr'" --prefix=usr --destdir="$dest" --from="$built"
check_refused "must not contain '..'" --prefix=/usr/../etc --destdir="$dest" --from="$built"
check_refused "must not contain whitespace" "--prefix=/usr/a b" --destdir="$dest" --from="$built"
check_refused "--enable cannot be used with --destdir" --enable=jobsetd --destdir="$dest" --from="$built"
check_refused "--from: $tmp/nowhere is not a directory" --destdir="$dest" --from="$tmp/nowhere"
mkdir -p "$tmp/empty"
check_refused "$tmp/empty/scheduler/jobsetd is missing" --destdir="$dest" --from="$tmp/empty"
[ -z "$(find "$dest" -mindepth 1)" ] || fail "a refused install wrote: $(find "$dest" -mindepth 1)"
# An install that fails part way (here: a wheel that cannot be built) leaves nothing.
if [ $python_ok = 1 ]; then
  cp -r "$built" "$tmp/broken"
  rm "$tmp/broken/python/proto/k8s_pb2.py"
  check_refused "building the Python wheel failed" --destdir="$dest" --from="$tmp/broken"
  expect_contains "$tmp/out" "lacks k8s_pb2.py"
  [ -z "$(find "$dest" -mindepth 1)" ] || fail "a failed install left: $(find "$dest" -mindepth 1)"
fi
# A manifest naming a path outside what was installed, or malformed, removes nothing.
install_cmd --destdir="$dest" --from="$built" || fail "install failed"
before=$(files_under "$dest")
manifest=$dest/usr/local/share/jobset/install-manifest
cp "$manifest" "$tmp/manifest"
echo "f 0000 /usr/local/bin/../../../etc/passwd" >>"$manifest"
check_refused "bad line 'f 0000 /usr/local/bin/../../../etc/passwd'" --uninstall --destdir="$dest"
cp "$tmp/manifest" "$manifest"
echo "x /" >>"$manifest"
check_refused "bad line 'x /'" --uninstall --destdir="$dest"
[ "$(files_under "$dest")" = "$before" ] || fail "a refused uninstall removed files"
cp "$tmp/manifest" "$manifest"
install_cmd --uninstall --destdir="$dest" || fail "uninstall failed"
[ -z "$(find "$dest" -mindepth 1)" ] || fail "uninstall left: $(find "$dest" -mindepth 1)"

# --- A real prefix (no destdir), so systemd-analyze can check the units against real paths.
prefix=$tmp/prefix
install_cmd --prefix="$prefix" --sysconfdir="$tmp/etc" --from="$built" || fail "install failed"
expect_contains "$prefix/lib/systemd/system/jobsetd.service" "EnvironmentFile=$tmp/etc/jobset/jobsetd.env"
expect_contains "$prefix/lib/systemd/system/jobsetd.service" "ExecStart=$prefix/bin/jobsetd"
if command -v systemd-analyze >/dev/null; then
  if ! systemd-analyze verify "$prefix"/lib/systemd/system/*.service >"$tmp/verify" 2>&1 ||
    [ -s "$tmp/verify" ]; then
    fail "systemd-analyze verify: $(cat "$tmp/verify")"
  fi
else
  echo "SKIP systemd-analyze verify: systemd-analyze is not installed"
fi
wheel=$prefix/share/jobset/python/$wheel_name
[ $python_ok = 0 ] || [ -f "$wheel" ] || fail "no wheel at $wheel"

# --- The Python client, installed into scratch venvs and imported from elsewhere.
use_client() { # VENV
  (cd "$tmp/elsewhere" && "$1/bin/python" -B -c '
import sys
import jobset
from jobset._proto import jobset_pb2, jobset_service_pb2_grpc
assert jobset.__file__.startswith(sys.prefix), jobset.__file__
assert "proto" not in sys.modules, "a top-level proto package was imported"
js = jobset.load_manifest("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: t}\nspec: {}\n")
assert isinstance(js[0][0], jobset_pb2.JobSet), type(js[0][0])
client = jobset.Client("127.0.0.1:1")
client.close()
print("ok", jobset.__file__)
') >"$tmp/use" 2>&1 || fail "using the client from $1: $(cat "$tmp/use")"
}
mkdir -p "$tmp/elsewhere"
if [ $python_ok = 0 ]; then
  echo "SKIP Python install: /usr/bin/python3 lacks setuptools, wheel or pip (Debian: python3-setuptools python3-wheel python3-pip)"
elif ! /usr/bin/python3 -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.out" 2>&1; then
  echo "SKIP Python install: /usr/bin/python3 -m venv failed (Debian: python3-venv): $(tail -1 "$tmp/venv.out")"
else
  "$tmp/venv/bin/pip" install -q --no-index "$wheel" >"$tmp/pip" 2>&1 || fail "pip install the wheel: $(cat "$tmp/pip")"
  use_client "$tmp/venv"
  "$tmp/venv/bin/pip" uninstall -y -q jobset >"$tmp/pip" 2>&1 || fail "pip uninstall: $(cat "$tmp/pip")"
  [ -z "$(find "$tmp/venv/lib" -path '*site-packages/jobset*')" ] || fail "pip uninstall left jobset files"
  # From the source folder (modules generated with protoc), as a launcher author would.
  /usr/bin/python3 -m venv --system-site-packages "$tmp/venv2"
  "$tmp/venv2/bin/pip" install -q --no-index "$root/python" >"$tmp/pip" 2>&1 ||
    fail "pip install ./python: $(cat "$tmp/pip")"
  use_client "$tmp/venv2"
  for junk in build jobset.egg-info; do
    [ ! -e "$root/python/$junk" ] || fail "pip install ./python left python/$junk in the tree"
  done
fi

install_cmd --uninstall --prefix="$prefix" || fail "uninstall failed"
[ -z "$(find "$prefix" "$tmp/etc" -type f 2>/dev/null)" ] || fail "uninstall left: $(find "$prefix" "$tmp/etc" -type f)"

# --- --enable, against a stand-in systemctl that logs its arguments: enabled on request only,
# kept enabled by a reinstall, disabled by the uninstall.
mkdir -p "$tmp/path"
printf '#!/bin/sh
echo "$*" >>%s
' "$tmp/systemctl.log" >"$tmp/path/systemctl"
chmod 0755 "$tmp/path/systemctl"
: >"$tmp/systemctl.log"
with_systemctl() { PATH="$tmp/path:$PATH" install_cmd "$@"; }
with_systemctl --prefix="$prefix" --sysconfdir="$tmp/etc" --from="$built" --enable=jobsetd ||
  { cat "$tmp/out"; fail "install --enable failed"; }
expect_line "$tmp/systemctl.log" "enable --now jobsetd"
expect_line "$prefix/share/jobset/install-manifest" "e jobsetd"
grep -q "jobset-agent" "$tmp/systemctl.log" && fail "--enable=jobsetd touched jobset-agent"
: >"$tmp/systemctl.log"
with_systemctl --prefix="$prefix" --sysconfdir="$tmp/etc" --from="$built" || fail "reinstall failed"
grep -q "disable\|enable" "$tmp/systemctl.log" && fail "a reinstall changed what is enabled: $(cat "$tmp/systemctl.log")"
expect_line "$prefix/share/jobset/install-manifest" "e jobsetd"
expect_contains "$tmp/out" "systemctl restart jobsetd"
with_systemctl --uninstall --prefix="$prefix" || fail "uninstall failed"
expect_line "$tmp/systemctl.log" "disable --now jobsetd"
[ -z "$(find "$prefix" "$tmp/etc" -type f 2>/dev/null)" ] || fail "uninstall left: $(find "$prefix" "$tmp/etc" -type f)"
check_refused "--enable: unknown unit 'sshd'" --prefix="$prefix" --from="$built" --enable=sshd

if [ $failures -gt 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
