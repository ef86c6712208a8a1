#!/usr/bin/env bash
# Validates the deploy recipes in docs/deploy/ (docs/deploy.md), each with a real validator:
#   - the systemd user units with `systemd-analyze verify --user` (Debian's `systemd`, installed
#     with apt-get when missing and this runs as root). verify needs each ExecStart's program to
#     exist, so it checks copies in a temporary folder whose `%h/.cargo/bin/livenote` names the
#     livenote built here ($LIVENOTE_BIN, else target/debug/livenote, built if missing); any line
#     it prints (an unknown key is only a warning to it) fails the check;
#   - the GitHub workflow against the GitHub workflow schema (scripts/check-workflows.sh, its
#     check-jsonschema in target/ci-venv);
#   - the Kubernetes manifests with kubernetes-validate --strict (PyPI, pinned, into the same venv;
#     its schemas ship inside the package, so nothing is read from the network).
# Each validator is first shown a broken copy and must reject it, so a validator that passes
# everything fails this script instead of passing the recipes.
#
#   bash scripts/check-deploy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
k8s_version=1.37.0
venv="${LIVENOTE_CI_VENV:-${CARGO_TARGET_DIR:-$PWD/target}/ci-venv}"
deploy=docs/deploy
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# --- systemd ---------------------------------------------------------------------------------
if ! command -v systemd-analyze >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "installing Debian's systemd for systemd-analyze" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >&2
    elif [[ -n ${CI:-} ]]; then
        echo "error: systemd-analyze is missing and cannot be installed here (not root, or no apt-get)" >&2
        exit 1
    fi
fi
units=("$deploy"/*.service "$deploy"/*.timer)
if command -v systemd-analyze >/dev/null; then
    bin="${LIVENOTE_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/livenote}"
    if [[ ! -x $bin ]]; then
        cargo build --quiet --bin livenote
    fi
    bin="$(realpath "$bin")"
    mkdir -p "$tmp/units" "$tmp/run"
    for unit in "${units[@]}"; do
        sed "s#%h/.cargo/bin/livenote#$bin#g" "$unit" >"$tmp/units/$(basename "$unit")"
    done
    verify() {
        # The user manager's checks (these are user units); it needs a runtime folder.
        (cd "$1" && XDG_RUNTIME_DIR="$tmp/run" systemd-analyze verify --user --man=no "${@:2}" 2>&1) || true
    }
    # A unit with a key systemd does not know: the validator must say so.
    mkdir -p "$tmp/broken"
    sed 's/^Type=oneshot/Type=oneshot\nRestartt=always/' "$tmp/units/livenote-tick.service" \
        >"$tmp/broken/livenote-tick.service"
    if [[ -z $(verify "$tmp/broken" livenote-tick.service) ]]; then
        echo "error: systemd-analyze verify passed a unit with an unknown key" >&2
        exit 1
    fi
    names=()
    for unit in "${units[@]}"; do names+=("$(basename "$unit")"); done
    out="$(verify "$tmp/units" "${names[@]}")"
    if [[ -n $out ]]; then
        printf '%s\n' "$out" >&2
        echo "error: systemd-analyze verify found problems in ${names[*]}" >&2
        exit 1
    fi
    echo "systemd units ok: ${names[*]} (systemd-analyze verify --user, ExecStart $bin)"
else
    echo "######################################################################################" >&2
    echo "WARNING: systemd-analyze is missing: the systemd units in $deploy are NOT checked" >&2
    echo "(install systemd, or run this as root on Debian to have it installed)" >&2
    echo "######################################################################################" >&2
fi

# --- the GitHub workflow ---------------------------------------------------------------------
workflows=("$deploy"/*.yml)
# A job without `runs-on`: the schema must reject it.
sed '/runs-on:/d' "$deploy/github-actions.yml" >"$tmp/broken-workflow.yml"
if bash scripts/check-workflows.sh "$tmp/broken-workflow.yml" >/dev/null 2>&1; then
    echo "error: check-jsonschema passed a workflow whose job has no runs-on" >&2
    exit 1
fi
bash scripts/check-workflows.sh "${workflows[@]}"

# --- Kubernetes ------------------------------------------------------------------------------
python="$venv/bin/python"
k8s_ready() {
    "$python" - "$k8s_version" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
assert m.version("kubernetes-validate") == sys.argv[1]
PY
}
if ! k8s_ready; then
    echo "installing kubernetes-validate $k8s_version into $venv" >&2
    "$python" -m pip install --quiet --disable-pip-version-check "kubernetes-validate==$k8s_version" >&2
    if ! k8s_ready; then
        echo "error: $venv has no working kubernetes-validate $k8s_version after the install" >&2
        exit 1
    fi
fi
manifests=("$deploy"/*.yaml)
# A field the CronJob spec does not have: --strict must reject it.
sed 's/^  concurrencyPolicy: Forbid$/  concurrencyPolicy: Forbid\n  concurrency: Forbid/' \
    "$deploy/kubernetes-cronjob.yaml" >"$tmp/broken-cronjob.yaml"
if "$venv/bin/kubernetes-validate" --strict --quiet "$tmp/broken-cronjob.yaml" >/dev/null 2>&1; then
    echo "error: kubernetes-validate passed a CronJob with an unknown field" >&2
    exit 1
fi
"$venv/bin/kubernetes-validate" --strict --quiet "${manifests[@]}"
echo "Kubernetes manifests ok: ${manifests[*]} (kubernetes-validate $k8s_version --strict)"
