"""The deploy files (deploy/: the images, the compose file, the Kubernetes manifests, the systemd
unit) against their schemas and against the project: every variable they set is one of the settings
table, every command they run is an `arena` command, every image is built here or is an
official one, and the images hold what the project and its sample bots need. Offline: the
compose specification ships with check-jsonschema, Kubernetes' schemas with kubernetes-validate.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "k8s"
DOCKERFILES = sorted(DEPLOY.glob("*.Dockerfile"))
#: the images not built here: Docker's official images of the two servers a league needs
OFFICIAL = {"redis", "postgres"}
#: the Kubernetes releases the manifests are checked against: the first with every field they
#: use (a pod's user namespace with an unmasked /proc) and the newest whose schemas are shipped
K8S_VERSIONS = ("1.33.0", "latest")
VAR = re.compile(r"\bARENA_[A-Z0-9_]+\b")
PORT_PART_B = "ARENA_METRICS_PORT"


KUSTOMIZATION = K8S / "kustomization.yaml"


def _manifests() -> list[tuple[Path, dict]]:
    """(file, resource) of every Kubernetes resource in deploy/k8s/ (not the kustomization)."""
    out = []
    for path in sorted(K8S.rglob("*.yaml")):
        if path != KUSTOMIZATION:
            out += [(path, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return out


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _interpolate(text: str) -> str:
    """A compose value as compose would make it with nothing set: ``${X:-d}`` is ``d``, a
    variable with no default is ``X`` itself (any word)."""
    return re.sub(r"\$\{(\w+)(?::?-([^}]*)|:?\?[^}]*)?\}",
                  lambda m: m.group(2) if m.group(2) is not None else m.group(1), text)


def _instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    lines = [ln for ln in dockerfile.read_text().splitlines() if not ln.lstrip().startswith("#")]
    text = re.sub(r"\\\n", " ", "\n".join(lines))
    return [(m.group(1).upper(), m.group(2).strip())
            for m in re.finditer(r"^\s*([A-Za-z]+)\s+(.*)$", text, re.M)]


def _pod_specs() -> list[tuple[str, dict]]:
    """(where, pod spec) of every workload manifest."""
    out = []
    for path, doc in _manifests():
        spec = doc.get("spec", {})
        pod = spec.get("template", {}).get("spec")
        if doc.get("kind") == "CronJob":
            pod = spec["jobTemplate"]["spec"]["template"]["spec"]
        if pod:
            out.append((f"{path.relative_to(ROOT)}: {doc['kind']} {doc['metadata']['name']}", pod))
    return out


def _read_variables() -> set[str]:
    """The ARENA_* variables the project reads: the settings table's (``house.settings``; the
    structure test sees that no code reads one outside it)."""
    from house.settings import TABLE
    return set(TABLE)


def _documented_settings() -> list[str]:
    """The variables of docs/deploy.md's configuration table, in its order."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    table = text[text.index("| variable | read by |"):].split("\n\n")[0]
    return [name for line in table.splitlines()[2:]
            for name in VAR.findall(line.split("|")[1])]


@functools.cache
def _parser() -> argparse.ArgumentParser:
    from cli.main import build_parser
    return build_parser()


def _arena_parse(argv: list[str], where: str) -> argparse.Namespace:
    """``argv`` (after ``arena``) parsed by the CLI's own parser, or a failure naming where."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return _parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"{where}: `arena {shlex.join(argv)}` is not an arena command: "
                    f"{err.getvalue().strip().splitlines()[-1] if err.getvalue() else '?'}")


def _entrypoint(dockerfile: Path) -> tuple[list[str], list[str]]:
    """A Dockerfile's ENTRYPOINT and CMD (exec form)."""
    got = {"ENTRYPOINT": [], "CMD": []}
    for op, args in _instructions(dockerfile):
        if op in got:
            got[op] = json.loads(args)
    return got["ENTRYPOINT"], got["CMD"]


def _after_arena(argv: list[str], where: str) -> list[str]:
    """The arguments after the ``arena`` program in ``argv`` (an init such as tini before it)."""
    for i, word in enumerate(argv):
        if _is_arena(word):
            return argv[i + 1:]
    pytest.fail(f"{where}: {argv} does not run arena")


# -- schemas ---------------------------------------------------------------------------------
def test_the_compose_file_follows_the_compose_specification():
    run = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                          "vendor.compose-spec", str(COMPOSE)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_the_manifests_follow_kubernetes_schemas(version):
    import kubernetes_validate
    from kubernetes_validate.utils import latest_version
    version = latest_version() if version == "latest" else version
    docs = _manifests()
    assert {d["kind"] for _, d in docs} >= {"Deployment", "StatefulSet", "Service", "ConfigMap",
                                            "Job"}
    problems = []
    for path, doc in docs:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            problems.append(f"{path.relative_to(ROOT)}: {doc['kind']} "
                            f"{doc['metadata']['name']}: {'.'.join(map(str, e.path))}: "
                            f"{e.message}")
    assert not problems, f"against Kubernetes {version}:\n" + "\n".join(problems)


def test_an_unmasked_proc_is_asked_only_in_a_pod_of_its_own_user_namespace():
    """What the API server checks and the schema cannot: procMount Unmasked needs hostUsers
    false."""
    asked = []
    for where, pod in _pod_specs():
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            if c.get("securityContext", {}).get("procMount") == "Unmasked":
                asked.append(where)
                assert pod.get("hostUsers") is False, (
                    f"{where}: container {c['name']} asks procMount Unmasked; the API server "
                    "accepts it only with hostUsers: false")
    assert asked, "no pod asks for an unmasked /proc: bwrap cannot mount a seat's own /proc"


def test_the_kustomization_applies_every_manifest_and_makes_the_secret_they_name():
    k = yaml.safe_load(KUSTOMIZATION.read_text())
    top = sorted(p.name for p in K8S.glob("*.yaml") if p != KUSTOMIZATION)
    assert sorted(k["resources"]) == top, "deploy/k8s/kustomization.yaml: resources"
    images = {c["image"].split(":")[0] for _, pod in _pod_specs() for c in pod["containers"]
              if c["image"].startswith("shengji-arena-")}
    assert images <= {i["name"] for i in k["images"]}, "kustomization.yaml: images"
    (gen,) = k["secretGenerator"]
    example = K8S / (gen["envs"][0] + ".example")
    keys = {ln.split("=", 1)[0] for ln in example.read_text().splitlines()
            if "=" in ln and not ln.startswith("#")}
    named = set()
    for where, pod in _pod_specs():
        for c in pod["containers"]:
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["name"] == gen["name"], f"{where}: Secret {ref['name']}"
                    named.add(ref["key"])
    assert named == keys, f"{example.name} has {sorted(keys)}, the pods use {sorted(named)}"


# -- consistency with the project --------------------------------------------------------------
def _deploy_files() -> list[Path]:
    """Every deploy file and docs/deploy.md (deploy/README.md only points to the latter)."""
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.name != "README.md") + [
        ROOT / "docs" / "deploy.md"]


def test_every_arena_variable_the_deploy_files_set_is_one_the_code_reads():
    read = _read_variables()
    assert {"ARENA_BROKER", "ARENA_DB", "ARENA_MAX_ATTEMPTS", "ARENA_BOT_CACHE"} <= read, read
    unknown = {}
    for path in _deploy_files():
        for name in set(VAR.findall(path.read_text())) - read:
            unknown.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert not unknown, (f"variables no code reads (it reads {', '.join(sorted(read))}): "
                         + "; ".join(f"{n} in {', '.join(w)}" for n, w in sorted(unknown.items())))


def test_the_deploy_pages_settings_are_the_operators_and_authors_of_the_settings_table():
    from house.settings import TABLE, Scope
    documented = _documented_settings()
    assert len(documented) == len(set(documented)), documented
    wanted = {s.name for s in TABLE.values() if s.scope in (Scope.OPERATOR, Scope.AUTHOR)}
    assert set(documented) == wanted, (
        f"docs/deploy.md lists {sorted(set(documented) - wanted)} the table does not give an "
        f"operator or author; the table has {sorted(wanted - set(documented))} it does not list")


def test_compose_and_kubernetes_give_the_workers_the_same_variables():
    compose = set(_compose()["services"]["worker"]["environment"])
    k8s = set()
    for where, pod in _pod_specs():
        if "arena-worker" in where:
            c = pod["containers"][0]
            k8s |= {e["name"] for e in c.get("env", [])}
            for ref in c.get("envFrom", []):
                name = ref["configMapRef"]["name"]
                k8s |= {k for _, d in _manifests() if d["kind"] == "ConfigMap"
                        and d["metadata"]["name"] == name for k in d["data"]}
    assert {v for v in compose if v.startswith("ARENA_")} == {v for v in k8s
                                                             if v.startswith("ARENA_")}
    assert PORT_PART_B in compose


def _commands() -> list[tuple[str, list[str]]]:
    """(where, arguments after `arena`) of every command the deploy files and docs/deploy.md
    run."""
    out = []
    entry = {}
    for df in DOCKERFILES:
        ep, cmd = _entrypoint(df)
        where = str(df.relative_to(ROOT))
        assert ep and cmd, f"{where}: an ENTRYPOINT and a CMD in exec form"
        entry[df.name] = ep
        out.append((where, _after_arena(ep, where) + cmd))
    for name, svc in _compose()["services"].items():
        if "build" in svc:
            where = f"deploy/compose.yaml: service {name}"
            ep = entry[Path(svc["build"]["dockerfile"]).name]
            cmd = [_interpolate(str(a)) for a in svc.get("command", [])]
            out.append((where, _after_arena(svc.get("entrypoint", ep), where) + cmd))
    built = _built_images()
    for where, pod in _pod_specs():
        for c in pod["containers"]:
            if c["image"] in built:
                ep = c.get("command") or entry[built[c["image"]].name]
                out.append((f"{where}: {c['name']}", _after_arena(ep, where) + c.get("args", [])))
    unit = (DEPLOY / "arena-worker.service").read_text()
    start = re.search(r"^ExecStart=(.*)$", unit, re.M).group(1)
    out.append(("deploy/arena-worker.service", _after_arena(shlex.split(start), "ExecStart")))
    doc = ROOT / "docs" / "deploy.md"
    for block in _shell_blocks(doc):
        for line in re.sub(r"\\\n", " ", block).splitlines():
            line = line.split(" #")[0].strip()
            words = shlex.split(line) if line and not line.startswith("#") else []
            argv = _compose_run(words)
            if argv is None:
                argv = _docker_run(words)
            if argv is None:
                argv = next((words[i + 1:] for i, w in enumerate(words)
                             if _is_arena(w) and i + 1 < len(words)), None)
            if argv is not None:
                out.append((f"docs/deploy.md: {line}", argv))
    return out


def _shell_blocks(doc: Path) -> list[str]:
    """The shell blocks (```sh, or no language) of a Markdown file."""
    blocks, lang, lines = [], None, []
    for line in doc.read_text().splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                if lang in ("", "sh", "shell", "bash"):
                    blocks.append("\n".join(lines) + "\n")
                lang = None
        elif lang is not None:
            lines.append(line)
    return blocks


def _is_arena(word: str) -> bool:
    """The arena program: ``arena`` or a path to it (not a URL that ends in /arena)."""
    return Path(word).name == "arena" and ":" not in word and "=" not in word


def _docker_run(words: list[str]) -> list[str] | None:
    """The arguments of ``docker run [OPTIONS] IMAGE ARGS`` for an image built here (its
    entrypoint is arena), else None."""
    if words[:2] != ["docker", "run"]:
        return None
    i = 2
    while i < len(words) and words[i].startswith("-"):
        alone = "=" in words[i] or words[i] in ("-d", "--detach", "--rm", "-i", "-t", "-it",
                                                "--init", "--read-only")
        i += 1 if alone else 2
    if i < len(words) and words[i].split("/")[-1].split(":")[0] in {
            t.split(":")[0] for t in _built_images()}:
        return words[i + 1:]
    return None


def _compose_run(words: list[str]) -> list[str] | None:
    """The arguments of ``docker compose ... run [OPTIONS] SERVICE ARGS`` for a service whose
    entrypoint is arena (the worker, the web app), else None."""
    if "compose" not in words or "run" not in words[words.index("compose"):]:
        return None
    i = words.index("run", words.index("compose")) + 1
    while i < len(words) and words[i].startswith("-"):
        takes = words[i] in ("-v", "--volume", "-e", "--env", "-w", "--workdir", "--name",
                             "-u", "--user", "-p", "--publish", "-l", "--label")
        i += 2 if takes else 1
    if i < len(words) and words[i] in _compose()["services"] and "build" in _compose()[
            "services"][words[i]]:
        return words[i + 1:]
    return None


def test_every_command_the_deploy_files_run_is_an_arena_command():
    commands = _commands()
    names = set()
    for where, argv in commands:
        args = _arena_parse(argv, where)
        names.add(argv[0])
        assert callable(getattr(args, "func", None)), f"{where}: `arena {shlex.join(argv)}` " \
                                                      "names no command"
    assert {"worker", "web", "season"} <= names, names


def test_the_docs_name_the_workers_command():
    """`arena workers --broker URL` (the live view of a broker's workers) is in the docs, and
    parses as the CLI defines it."""
    lines = [argv for where, argv in _commands() if where.startswith("docs/") and
             argv[:1] == ["workers"]]
    assert lines, "docs/deploy.md shows no `arena workers` command"
    for argv in lines:
        _arena_parse(argv, "docs/deploy.md")


def _built_images() -> dict[str, Path]:
    """The images compose builds: tag -> Dockerfile."""
    out = {}
    for name, svc in _compose()["services"].items():
        if "build" in svc:
            b = svc["build"]
            context = (DEPLOY / b["context"]).resolve()
            assert context == ROOT, f"service {name}: builds from {context}, not the repository"
            out[svc["image"]] = context / b["dockerfile"]
    return out


def _official(image: str) -> bool:
    repo = image.split(":")[0]
    return repo in OFFICIAL and "/" not in repo and ":" in image


def test_every_image_is_built_from_a_dockerfile_here_or_is_an_official_one():
    built = _built_images()
    for tag, dockerfile in built.items():
        assert dockerfile.is_file() and dockerfile.parent == DEPLOY, (tag, dockerfile)
    assert set(built.values()) == set(DOCKERFILES), "a Dockerfile in deploy/ that nothing builds"
    compose_images = set(built)
    for name, svc in _compose()["services"].items():
        if "build" not in svc:
            assert _official(svc["image"]), f"compose service {name}: image {svc['image']} is " \
                                            "neither built here nor an official tagged image"
            compose_images.add(svc["image"])
    for where, pod in _pod_specs():
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            assert c["image"] in compose_images, (
                f"{where}: image {c['image']} is none of the images compose builds or runs "
                f"({', '.join(sorted(compose_images))})")
    for df in DOCKERFILES:
        args = {}
        for op, rest in _instructions(df):
            if op == "ARG" and "=" in rest:
                k, v = rest.split("=", 1)
                args[k.strip()] = v.strip()
            if op == "FROM":
                base = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), "?"),
                              rest.split()[0])
                assert base.split(":")[0] == "python" and ":" in base, \
                    f"{df.name}: FROM {base}: expected the official python image, tagged"


def _copies(df: Path) -> list[str]:
    out = []
    for op, rest in _instructions(df):
        if op in ("COPY", "ADD"):
            words = [w for w in shlex.split(rest) if not w.startswith("--")]
            assert op == "COPY", f"{df.name}: ADD {rest}: use COPY"
            out += words[:-1]
    return out


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_what_a_dockerfile_copies_exists_and_is_not_ignored(dockerfile):
    ignore = dockerfile.with_name(dockerfile.name + ".dockerignore")
    ignored = {ln.strip().rstrip("/") for ln in ignore.read_text().splitlines()
               if ln.strip() and not ln.startswith("#")} if ignore.exists() else set()
    sources = _copies(dockerfile)
    assert sources
    for src in sources:
        assert (ROOT / src).exists(), f"{dockerfile.name}: COPY {src}: no such file in the " \
                                      "repository (the build context)"
        assert src.rstrip("/") not in ignored, f"{dockerfile.name}: COPY {src}, which " \
                                               f"{ignore.name} leaves out"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_an_image_holds_every_package_of_the_project(dockerfile):
    """The folders of every package pyproject.toml installs, and its readme, are copied."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dirs = project["tool"]["setuptools"].get("package-dir", {})
    needed = {project["project"]["readme"], "pyproject.toml"}
    for package in project["tool"]["setuptools"]["packages"]:
        top = package.split(".")[0]
        needed.add(Path(dirs.get(top, top)).parts[0])
    copied = {Path(s).parts[0] for s in _copies(dockerfile)}
    assert needed <= copied, f"{dockerfile.name} copies no {', '.join(sorted(needed - copied))}"


def _apt_packages(df: Path) -> set[str]:
    words = set()
    for op, rest in _instructions(df):
        if op == "RUN" and "apt-get install" in rest:
            words |= {w for w in rest.split("apt-get install", 1)[1].split("&&")[0].split()
                      if not w.startswith("-")}
    return words


def test_the_worker_image_has_the_sandbox_and_what_the_sample_bots_build_with():
    """The Debian packages the project's own install scripts name for the sandbox and the C++
    sample, Node.js and npm for the Node.js sample (its command and its build), and the
    compiler and make the C++ sample's build runs."""
    have = _apt_packages(DEPLOY / "worker.Dockerfile")
    needed = set()
    for script, what in ((ROOT / "tools" / "install-sandbox.sh", "bubblewrap"),
                         (ROOT / "sample_bots" / "cpp" / "install-deps.sh", "libgrpc++-dev")):
        text = re.sub(r"\\\n", " ", script.read_text())
        line = next(ln for ln in text.splitlines() if "install-debian-packages.sh" in ln and what in ln)
        rest = line.split("install-debian-packages.sh", 1)[1].lstrip('"')
        needed |= {w for w in shlex.split(rest)[1:]
                   if re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", w)}
    for manifest in sorted((ROOT / "sample_bots").glob("*/bot.toml")):
        m = tomllib.loads(manifest.read_text())
        builds = m.get("build", [])
        builds = [builds] if builds and isinstance(builds[0], str) else builds
        for program in [m["command"][0]] + [step[0] for step in builds]:
            needed |= {"node": {"nodejs"}, "npm": {"npm"}, "make": {"make", "g++"}}.get(program,
                                                                                     set())
    assert {"bubblewrap", "libgrpc++-dev", "nodejs", "npm", "make"} <= needed, needed
    assert needed <= have, f"worker.Dockerfile installs no {', '.join(sorted(needed - have))}"


def test_the_containers_that_play_give_the_sandbox_what_it_needs():
    """compose and Kubernetes both lift the three things that keep bwrap from making a seat's
    namespaces as an unprivileged user: the default seccomp profile, AppArmor's, and the
    masked /proc; and both run the worker as a user that is not root."""
    worker = _compose()["services"]["worker"]
    assert {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"} <= set(
        worker["security_opt"])
    pods = [(w, p) for w, p in _pod_specs() if p["containers"][0]["image"].startswith(
        "shengji-arena-worker")]
    assert pods
    for where, pod in pods:
        sc = pod["containers"][0]["securityContext"]
        assert pod["securityContext"]["runAsNonRoot"] is True, where
        assert sc["seccompProfile"]["type"] == "Unconfined", where
        assert sc["appArmorProfile"]["type"] == "Unconfined", where
        assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
