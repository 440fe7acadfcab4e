"""Who may name what: bot names, versions and authors as plain labels, names refused when they
could be taken for one already shown (``skeletons``), and each author's token."""

from __future__ import annotations

import functools
import hmac
import re
import secrets
import unicodedata

from typing import TYPE_CHECKING

from scheduler.registry.archives import RegistryError, quote, sha256
from scheduler.states import AuthorStatus

if TYPE_CHECKING:
    from scheduler.store.rows import AuthorRow

NAME_RULE = "1 to 64 ASCII letters, digits, '.', '_' or '-', beginning with a letter or a digit"
VERSION_RULE = ("1 to 64 ASCII letters, digits, '.', '_', '-' or '+', beginning with a letter or "
                "a digit")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)([0-9;:<=>?]*)[ -/]*[@-~]"     # CSI (colours, SGR)
                     r"|(?:\x1b[]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*"
                     r"(?:\x07|\x1b\\|\x9c)?"                           # OSC, DCS and kin
                     r"|\x1b[ -/]*[0-~]")                              # two-character escapes
_RLO, _ENDS_OVERRIDE = "\u202e", "\u202c\u2069"


def _visible(text: str) -> tuple[str, ...]:
    """What a terminal shows of ``text``: escape sequences dropped and the text an SGR 8
    ("conceal") hides until SGR 28 or 0, control and format characters (Cc, Cf: zero-width,
    bidi) dropped. Where a right-to-left override is present, also the text as it is shown
    (each overridden run reversed) and the whole of it reversed."""
    runs: list[tuple[bool, list[str]]] = [(False, [])]
    hidden, i = False, 0
    while i < len(text):
        m = _ESCAPE.match(text, i)
        if m:
            if m.group(1) is not None and m.group(0).endswith("m"):
                for code in re.split("[;:]", m.group(1)):
                    if code == "8":
                        hidden = True
                    elif code in ("28", "0", "00", ""):
                        hidden = False
            i = m.end()
            continue
        ch, i = text[i], i + 1
        if ch == _RLO or ch in _ENDS_OVERRIDE:
            runs.append((ch == _RLO, []))
        elif not hidden and unicodedata.category(ch) not in ("Cc", "Cf"):
            runs[-1][1].append(ch)
    plain = "".join("".join(chars) for _, chars in runs)
    if _RLO not in text:
        return (plain,)
    shown = "".join("".join(reversed(chars)) if rtl else "".join(chars) for rtl, chars in runs)
    return tuple(dict.fromkeys((plain, shown, plain[::-1])))


@functools.cache
def _prototypes() -> dict[str, str]:
    """Unicode TR39's confusables as a map from a character to its prototype, from the data
    ``confusable_homoglyphs`` ships (each character's homoglyphs): a character listed with one
    homoglyph maps to it; of two that list only each other, the one that is not a single
    character (a prototype may be several) or else the lower code point is the prototype."""
    from confusable_homoglyphs.confusables import confusables_data
    graph = {k.replace("\u200e", ""): [h["c"].replace("\u200e", "") for h in v]
             for k, v in confusables_data.items()}
    out: dict[str, str] = {}
    for char, glyphs in graph.items():
        if len(char) != 1 or len(glyphs) != 1:
            continue
        target = glyphs[0]
        back = graph.get(target, [])
        if back == [char] and len(target) == 1 and target > char:
            continue  # a pair of two single characters: the lower one is the prototype
        out[char] = target
    for _ in range(3):  # a prototype whose characters map on: to the end of the chain
        out = {k: "".join(out.get(c, c) for c in v) for k, v in out.items()}
    return out


def _skeleton(text: str) -> str:
    """Unicode TR39's skeleton of ``text``: NFD, each character by its prototype, NFD."""
    protos = _prototypes()
    return unicodedata.normalize(
        "NFD", "".join(protos.get(c, c) for c in unicodedata.normalize("NFD", text)))


@functools.lru_cache(maxsize=4096)
def skeletons(name: str) -> frozenset[str]:
    """The forms ``name`` is compared by: of its visible text (``_visible``) in NFKC, the
    confusable skeleton (``_skeleton``) of the text as written and of the text case-folded,
    each case-folded and taken to its skeleton again. The skeleton comes before the case
    folding, so that a capital ``I`` is read as the ``l`` it looks like (``moIly`` is
    ``molly``), not as the ``i`` it folds to; the folded text's keeps ``MOLLY`` and ``molly``
    one. ``0`` and ``O`` are one, and so are ``1``, ``I`` and ``l``."""
    out = set()
    for form in _visible(name):
        text = unicodedata.normalize("NFKC", form)
        for shown in (text, text.casefold()):
            out.add(_skeleton(_skeleton(shown).casefold()))
    return frozenset(out)


def resembled(name: str, existing) -> str | None:
    """The first of the ``existing`` names (other than ``name`` itself) that ``name`` could
    be taken for, or None."""
    mine = skeletons(name)
    for other in existing:
        if other != name and mine & skeletons(other):
            return other
    return None


def check_name(name: object, where: object, existing=()) -> str:
    """A bot's name: first refused if it resembles one of the ``existing`` names (the
    registry's, with their owners), then if it is not a plain label (``NAME_RULE``)."""
    if not isinstance(name, str):
        raise RegistryError(f"{where}: name {quote(name)}: expected a string of {NAME_RULE}")
    if name not in existing:
        like = resembled(name, existing)
        if like is not None:
            raise RegistryError(f"{where}: name {quote(name)} resembles the bot {like!r} "
                                f"(held by {owner_label(existing[like])}) once shown: choose "
                                "another name")
    if not _NAME.fullmatch(name):
        raise RegistryError(f"{where}: name {quote(name)}: expected {NAME_RULE}")
    return name


def check_version(version: object, where: object) -> str:
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise RegistryError(f"{where}: version {quote(version)}: expected {VERSION_RULE}")
    return version


def check_author(author: object, where: object) -> str:
    if not isinstance(author, str) or not _NAME.fullmatch(author):
        raise RegistryError(f"{where}: author {quote(author)}: expected {NAME_RULE}")
    return author


def owner_label(author: str | None) -> str:
    return f"author {author!r}" if author is not None else "the organiser"


# -- authors ------------------------------------------------------------------------------
ROLES = ("author", "organiser")


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, sha256(token.encode())


def add_author(store, name: str, *, role: str = "author", status: str = AuthorStatus.ACTIVE) -> str:
    """A new author and their token (shown once; only its sha256 is stored). ``role``
    "organiser": sees and does everything the service offers; ``status`` "pending": a
    self-registered author the organiser has not approved yet. A name that resembles an
    existing author's (``skeletons``: ``Alice`` or ``aIice`` beside ``alice``) is refused,
    naming that author to the organiser; a self-registered one is not told whose (it may be
    an author the public does not know)."""
    check_author(name, "author")
    if role not in ROLES:
        raise RegistryError(f"author {name!r}: role {role!r}: expected one of {ROLES}")
    like = resembled(name, [a.name for a in store.authors.all()])
    if like is not None:
        whose = ("an existing author's name" if status == AuthorStatus.PENDING
                 else f"the author {like!r}")
        raise RegistryError(f"author {name!r} resembles {whose}: choose another name")
    token, digest = _new_token()
    if not store.authors.add(name, digest, role=role, status=status):
        raise RegistryError(f"author {name!r} exists already")
    return token


def rotate_token(store, name: str) -> str:
    """A new token for ``name`` (shown once); the old one, and their sessions, stop working."""
    token, digest = _new_token()
    if not store.authors.change(name, token_hash=digest):
        raise RegistryError(f"no author {name!r}")
    return token


def revoke_token(store, name: str) -> None:
    """No token of ``name``'s works until ``rotate_token`` gives a new one."""
    if not store.authors.change(name, token_hash=""):
        raise RegistryError(f"no author {name!r}")


def token_author(store, token: str) -> AuthorRow | None:
    """The active author ``token`` is the token of (compared by its sha256), or None."""
    if not token or len(token) > 512:
        return None
    got = store.authors.by_token_hash(sha256(token.encode()))
    return got if got is not None and got.status == AuthorStatus.ACTIVE else None


def check_token(store, name: str, token: str) -> bool:
    """``token`` is active author ``name``'s (compared by its sha256, in constant time)."""
    stored = store.authors.token_hash(name)
    return bool(stored) and hmac.compare_digest(stored, sha256(token.encode()))
