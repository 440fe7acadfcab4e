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
- ``probe``: how the arena tells it is installed; a bot whose runtime is missing is refused
  (``missing``) naming the runtime and the Debian package to install (Go and Rust: only a
  build, ``needed_to_run``; a compiled program runs without its toolchain).

``docs/languages.md`` is the same table for bot authors.
"""

from __future__ import annotations

import glob
import os
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

DEBIAN_GO = "/usr/bin/go"
"""Debian's Go (``golang-go``: a link to ``/usr/lib/go-1.19/bin/go`` on Debian 12, whose
GOROOT, with the standard library compiled ahead in ``pkg/``, is under ``/usr``: every sandbox
binds ``/usr`` whole, so a Go build needs no bind of its own)."""
DEBIAN_CARGO = "/usr/bin/cargo"
DEBIAN_RUSTC = "/usr/bin/rustc"
"""Debian's Rust (``cargo``, ``rustc``: its libraries in ``/usr/lib/rustlib`` and
``/usr/lib/x86_64-linux-gnu``, under ``/usr``). A rustup copy in a home folder (``~/.cargo``,
first on many a ``PATH``) is never what the arena runs: no sandbox sees it."""


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
                "GOCACHE": "/tmp/go-cache", "GOTELEMETRY": "off"}
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
    """The Debian package(s) that install it (what ``missing`` tells to install)."""
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

    def environment(self, memory_mb: int, cgroup: bool, build: bool = False) -> dict[str, str]:
        """The variables the arena sets for it in a sandbox of ``memory_mb`` (``cgroup``: the
        seat has a memory cgroup; ``build``: a build step, not a bot)."""
        return self.environment_of(memory_mb, cgroup, build)

    def installed(self) -> bool:
        return not self.probe or any(glob.glob(p) for p in self.probe)

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
        if self.installed() or not (build or self.needed_to_run):
            return None
        return (f"its runtime {self.name!r} ({self.title}) is not installed on this machine: "
                f"install Debian's {self.package} (apt-get install {self.package})")


PYTHON = Runtime(
    "python", "Python 3, the arena's own interpreter", "python3", ("python", "python3"),
    arena_python=True, sdk=True,
    memory="about 32 MiB resident with the SDK and grpc imported",
    build="none needed; `python3` in a build step is the arena's interpreter")
JAVA = Runtime(
    "java", "Java 17, Debian's OpenJDK", "openjdk-17-jdk-headless", ("java", "javac", "jar"),
    probe=(f"{JAVA_HOMES}/bin/java",), binds=("/etc/java-17-openjdk",), reserves=True,
    memory="about 40 MiB resident at start (the sample: 47 MiB after 8 deals); reserves "
           "about 384 MiB besides its heap: `memory_mb` 448 or more without a seat cgroup",
    build="`javac -encoding UTF-8 --release 17 -d build src/*.java` (javac is a JVM: the same "
          "flags, from the build's 4096 MiB)",
    environment_of=_java_environment)
NODE = Runtime(
    "node", "Node.js, Debian's nodejs", "nodejs npm", ("node", "nodejs", "npm", "npx"),
    probe=("/usr/bin/node", "/usr/bin/nodejs"), reserves=True,
    memory="reserves about 730 MiB of address space at start (V8's code range): more than 512 "
           "without a seat cgroup",
    build="`npm ci --offline --cache ./npm-cache` from a vendored cache")
GO = Runtime(
    "go", "Go, Debian's golang-go", "golang-go", ("go",),
    probe=(DEBIAN_GO, "/usr/lib/go*/bin/go"), reserves=True, needed_to_run=False,
    memory="about 2 MiB resident (the sample), but Go 1.19's runtime reserves about 700 MiB of "
           "address space at start: under a smaller RLIMIT_AS it dies (\"failed to reserve page "
           "summary memory\"). A bot whose manifest says `runtime = \"go\"` gets the larger "
           "RLIMIT_AS under a seat cgroup and GOMEMLIMIT at 3/4 of `memory_mb`; without a "
           "cgroup it needs `memory_mb` 704 or more (640 fails)",
    build="`go build -o build/bot .` (standard library only, or modules vendored with "
          "`go mod vendor`): offline, GOPROXY=off, GOTOOLCHAIN=local, GOPATH and GOCACHE in "
          "the build's private /tmp",
    environment_of=_go_environment)
RUST = Runtime(
    "rust", "Rust, Debian's rustc and cargo", "cargo", ("cargo", "rustc"),
    probe=(DEBIAN_CARGO, DEBIAN_RUSTC), needed_to_run=False,
    memory="a Rust program reserves little (the sample: 2 MiB resident)",
    build="`cargo build --offline --release --target-dir build/target` with vendored crates "
          "(`cargo vendor`); CARGO_HOME=/tmp/cargo, CARGO_NET_OFFLINE=true, "
          "RUSTC=/usr/bin/rustc",
    environment_of=_rust_environment)
CPP = Runtime(
    "cpp", "C and C++, Debian's g++", "g++", ("g++", "c++", "gcc", "cc", "clang++", "clang"),
    probe=("/usr/bin/g++", "/usr/bin/c++", "/usr/bin/gcc", "/usr/bin/clang++"),
    memory="a C++ program reserves little (the gRPC sample about 20 MiB resident)",
    build="`make` (or `g++ ...`) writing into build/")
NATIVE = Runtime(
    "native", "an executable of the bot's own (a compiled Go, Rust or C++ program, a script)",
    "", arena_python=True,
    memory="whatever the program needs",
    build="its manifest's own steps")

RUNTIMES: dict[str, Runtime] = {r.name: r for r in (PYTHON, JAVA, NODE, GO, RUST, CPP, NATIVE)}
"""Every runtime, by name (a manifest's ``runtime`` names one of them)."""


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
    ``/usr/bin/java`` points to), Debian's Go and Rust for a bare ``go``, ``cargo`` or
    ``rustc`` (not a rustup copy first on the ``PATH``), else ``program`` itself."""
    if program in ("python", "python3"):
        return sys.executable
    debian = {"go": DEBIAN_GO, "cargo": DEBIAN_CARGO, "rustc": DEBIAN_RUSTC}.get(program)
    if debian is not None and os.access(debian, os.X_OK):
        return debian
    if program in ("java", "javac", "jar"):
        home = java_home()
        if home is not None and os.access(home / "bin" / program, os.X_OK):
            return str(home / "bin" / program)
    return program
