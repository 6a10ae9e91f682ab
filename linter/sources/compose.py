"""docker compose services.

Compose interpolates ``${VAR}``, ``${VAR:-default}``, ``$VAR`` (``$$`` is a literal ``$``) in every
value, from the shell environment and the ``.env`` file beside the compose file — never from the
service's own ``environment:``, which only reaches the container.  The linting machine's own
environment is not used (results must not differ between laptops and CI): a variable that no
``.env`` sets and that has no default stays unresolved.

A service with ``build:`` runs the image its Dockerfile makes, when that Dockerfile is in the
linted tree: the service's ``command:`` follows the image's ENTRYPOINT, or its base image's own
entrypoint; the image's ENV and ``pip install`` pin apply (``_built_image``).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from .. import safeio
from ..bounds import launches_full
from ..cancel import step as cancel_step
from ..findings import Finding, Severity
from ..launch import Context, EnvVar, GpuRequest, Located, Port
from ..script_env import ImageVars, ScriptEnv
from ..shell import split_commands
from ..source import CharMap, MapBuilder, SourceFile, Span, VarRef, Word, placed_word
from .commandline import (
    Found,
    Scope,
    WordComposer,
    find_launches,
    launch_from_image,
    parse_publish,
    parse_size,
    publish_unresolved,
    search_script,
)
from .yamlnodes import (
    Doc,
    Keys,
    get,
    get_str,
    is_map,
    is_scalar,
    is_seq,
    items,
    pairs,
    with_template_refs,
)

if TYPE_CHECKING:
    from .dockerfile import BuiltImage

DOTENV_MAX_BYTES = 1024 * 1024
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACE = re.compile(r"[{}]")


def _interpolations(text: str) -> Iterator[tuple[int, int, str | None, str | None, str | None]]:
    """(start, end, name, operator, default) of each match of the interpolation pattern
    ``\\$\\$|\\$\\{(NAME)(?:(:?[-?+])((?:[^{}]|\\{[^}]*\\})*))?\\}|\\$(NAME)`` found by
    ``finditer`` (name None for ``$$``), in linear time.  The regex read each `${NAME:-`
    default again from every `${` before it, quadratic ("${a:-{}" x 20,000: 24 s).

    A default is read one way: runs of characters other than braces, and `{…}` up to the first
    `}` after its `{`, until a `}` (it ends there) or a `{` with no `}` after it or the end (no
    match; giving back an item never puts a `}` next).  Reads from two `${` that meet at the same
    `{` go on alike, so the last read is remembered: a later read that reaches a `{` inside it
    ends where it ended."""
    n = len(text)
    last_close = text.rfind("}")
    read = (n + 1, -1, None)  # (first `{`, last position, closing `}` or None) of the last read

    def default_end(r: int) -> int | None:
        nonlocal read
        b = _BRACE.search(text, r)
        if b is None:
            return None
        at = b.start()
        if text[at] == "}":
            return at
        if read[0] <= at <= read[1]:
            return read[2]
        first = at
        while True:
            if at > last_close:  # a `{` never closed
                end, stop = at, None
                break
            b = _BRACE.search(text, text.find("}", at + 1) + 1)
            if b is None:
                end, stop = n, None
                break
            at = b.start()
            if text[at] == "}":
                end = stop = at
                break
        read = (first, end, stop)
        return stop

    pos = 0
    while True:
        i = text.find("$", pos)
        if i < 0 or i + 1 >= n:
            return
        pos = i + 1
        c = text[i + 1]
        if c == "$":
            yield i, i + 2, None, None, None
            pos = i + 2
        elif c == "{":
            m = _NAME.match(text, i + 2)
            if m is None:
                continue
            q = m.end()
            if text.startswith("}", q):
                yield i, q + 1, m.group(), None, None
                pos = q + 1
                continue
            if text.startswith(":", q) and text[q + 1:q + 2] in ("-", "?", "+"):
                op_end = q + 2
            elif text[q:q + 1] in ("-", "?", "+"):
                op_end = q + 1
            else:
                continue
            stop = default_end(op_end)
            if stop is not None:
                yield i, stop + 1, m.group(), text[q:op_end], text[op_end:stop]
                pos = stop + 1
        else:
            m = _NAME.match(text, i + 1)
            if m is not None:
                yield i, m.end(), m.group(), None, None
                pos = m.end()


# _interpolations of the short texts seen last: a compose file writes the same values in every
# service (`--tensor-parallel-size=${GPUS:-1}`, `${MODEL}`), and the matches depend on the text
# alone.  Only texts up to _SCANNED_MAX characters are kept (a long value's matches are read
# again, never held), and the table is cleared when full, so it never grows with a file.
_SCANNED: dict[str, tuple[tuple[int, int, str | None, str | None, str | None], ...]] = {}
_SCANNED_MAX = 1024
_SCANNED_LEN = 256


def _matches(text: str) -> Iterable[tuple[int, int, str | None, str | None, str | None]]:
    """``_interpolations(text)``, from the table when the text is short."""
    if len(text) > _SCANNED_LEN:
        return _interpolations(text)
    hit = _SCANNED.get(text)
    if hit is None:
        if len(_SCANNED) >= _SCANNED_MAX:
            _SCANNED.clear()
        hit = _SCANNED[text] = tuple(_interpolations(text))
    return hit


def is_compose(root: Any) -> bool:
    return is_map(root) and is_map(get(root, "services")) and get(root, "kind") is None


def dotenv(source: SourceFile) -> tuple[dict[str, str], Finding | None]:
    """Variables of the `.env` file beside a compose file (KEY=VALUE lines), and a finding when
    it exists but cannot be read (a FIFO, not UTF-8, over the size limit)."""
    if source.path.startswith("<"):
        return {}, None
    path = os.path.join(os.path.dirname(os.path.abspath(source.path)), ".env")
    if not os.path.lexists(path):
        return {}, None
    data = None
    try:
        data = safeio.memo(path, ("bytes", DOTENV_MAX_BYTES),  # once for all its documents
                           lambda p: safeio.read_bytes(p, DOTENV_MAX_BYTES))
        lines = safeio.decode_utf8(data).splitlines()
    except safeio.SideFileError as err:
        shown = os.path.join(os.path.dirname(source.path), ".env")
        what = (f"the .env beside {os.path.basename(source.path)} is not read "
                "(its variables are not used)")
        return {}, safeio.side_finding(shown, err, what, data=data)
    values: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key] = value
    return values, None


class _OutOfWords(Exception):
    """The file's budget of shell words ran out in an interpolation (args[0]: its place)."""


def interpolate(doc: Doc, node: Any, variables: dict[str, str]) -> Word:
    """A compose value with ``${…}`` interpolated; unknown variables stay literal and listed."""
    return with_template_refs(_interpolate(doc, node, variables))


def _interpolate(doc: Doc, node: Any, variables: dict[str, str]) -> Word:
    seg = doc.seg(node)
    text = seg.text
    if "$" not in text:
        return Word(text, seg.cmap, quoted=bool(node.style))
    cm = seg.cmap
    if not cm.is_linear or cm.length != len(text):
        return _interpolate_mapped(doc, node, variables, text, cm)
    # a slice of the file (a plain or quoted scalar on one line): a reference left unknown
    # stays in the text copied verbatim, which is copied at once up to the next `$$` or
    # expanded reference (the text before a first unknown reference as a piece of its own,
    # the run MapBuilder gave when each was copied alone), and its place is base + offset.
    # 40,000 `${A}` took 0.16 s with two copies and two map lookups each, now 0.06 s
    budget = doc.source.budget
    base = cm.base
    chars: list[str] = []
    places = MapBuilder()
    unresolved: list[VarRef] = []
    pos = 0  # the text from pos on is not copied yet
    cut = -1  # where its first unknown reference begins (-1: none)

    def copy(j: int) -> None:
        if pos < j:
            chars.append(text[pos:j])
            if pos < cut < j:
                places.linear(base + pos, cut - pos)
                places.linear(base + cut, j - cut)
            else:
                places.linear(base + pos, j - pos)

    for start, end, name, op, default_ in _matches(text):
        cancel_step()  # a step of reading, as a shell word is (linter/cancel.py)
        budget.words -= 1
        if budget.words < 0:
            raise _OutOfWords(base + start)
        if name is not None:
            value = variables.get(name)
            if op in (":-", "-"):
                if value is None or (op == ":-" and value == ""):
                    value = default_ or ""
            elif op in (":+", "+"):
                value = (default_ or "") if value else ("" if value is not None else None)
            if value is None:
                unresolved.append(VarRef(name, Span(base + start, base + end)))
                if cut < 0:
                    cut = start
                continue
        copy(start)
        pos, cut = end, -1
        if name is None:  # $$
            chars.append("$")
            places.char(base + start, base + end)
        else:
            chars.append(value)
            places.const(base + start, base + end, len(value))
    copy(len(text))
    return Word("".join(chars), places.build(cm.tail), bool(node.style), tuple(unresolved))


def _interpolate_mapped(doc: Doc, node: Any, variables: dict[str, str], text: str,
                        cm: CharMap) -> Word:
    """_interpolate of a value whose characters are not a slice of the file (escapes, folded
    lines): each piece copied through its map."""
    # each reference spends a word of the file's budget (bounds.MAX_SHELL_WORDS), as the words
    # of the shell text it is part of do: an unknown one is kept with its place, about 180
    # bytes, and 9.5 MiB of `${A} ${A} …` in one command took 9.5 s and 620 MiB
    budget = doc.source.budget
    chars: list[str] = []
    places = MapBuilder()
    unresolved: list[VarRef] = []
    pos = 0

    def copy(i: int, j: int) -> None:
        chars.append(text[i:j])
        places.extend(cm, i, j)

    for start, end, name, op, default_ in _matches(text):
        cancel_step()  # a step of reading, as a shell word is (linter/cancel.py)
        budget.words -= 1
        if budget.words < 0:
            raise _OutOfWords(cm.start(start))
        copy(pos, start)
        s, e = cm.start(start), cm.end(end - 1)
        pos = end
        if name is None:  # $$
            chars.append("$")
            places.char(s, e)
            continue
        default = default_ or ""
        value = variables.get(name)
        if op in (":-", "-"):
            if value is None or (op == ":-" and value == ""):
                value = default
        elif op in (":+", "+"):
            value = default if value else ("" if value is not None else None)
        if value is None:
            copy(start, end)
            unresolved.append(VarRef(name, Span(s, e)))
            continue
        chars.append(value)
        places.const(s, e, len(value))
    copy(pos, len(text))
    return Word("".join(chars), places.build(cm.tail), bool(node.style), tuple(unresolved))


def extract_compose(doc: Doc, root: Any, found: Found) -> None:
    variables, unread = dotenv(doc.source)
    if unread is not None:
        found.findings.append(unread)
    for name, name_node, service in pairs(get(root, "services")):
        if launches_full(len(found.launches)):
            break  # runner.extract_file says where reading stopped
        if is_map(service):
            try:
                _service(doc, name, name_node, service, variables, found)
            except _OutOfWords as stop:
                # the service is not read: its values are not all known
                budget = doc.source.budget
                if budget.cut is None:
                    budget.cut, budget.what = stop.args[0], "words and ${…} references"
                break


def _service(doc: Doc, name: str, name_node: Any, svc: Any, variables: dict[str, str],
             found: Found) -> None:
    def word(node: Any) -> Word:
        return interpolate(doc, node, variables)

    keys = Keys(svc)  # the service's keys, its merge keys' (`<<: *defaults`) resolved once
    env: dict[str, EnvVar] = {}
    environment = keys.get("environment")
    if is_map(environment):
        for key, key_node, value in pairs(environment):
            if is_scalar(value) and value.tag != "tag:yaml.org,2002:null" and value.value != "":
                w = word(value)
                env[key] = EnvVar(key, None if w.unresolved else w.text, w.span)
            else:
                env[key] = EnvVar(key, None, doc.span(key_node))
    else:
        for item in items(environment):
            if not is_scalar(item):
                continue
            w = word(item)
            key, eq, value = w.text.partition("=")
            env[key] = EnvVar(key, value if eq and not w.unresolved else None,
                              w.sub(len(key) + 1) if eq else w.span)
    built, built_at = _built_image(doc, keys.get("build"), word, found) or (None, None)
    if built is not None:
        # the image's ENV is the container's environment under the service's `environment:`
        # (a view, not a copy per service: script_env.ImageVars)
        env = ScriptEnv(ImageVars(built.env, built_at)).view(env)  # type: ignore[assignment]
    gpus = _gpus(doc, keys, word)
    ipc = keys.get("ipc")
    shm_size = keys.get("shm_size")
    shm: Located | None = None
    shm_bytes: int | None = None
    if is_scalar(ipc) and ipc.value == "host":
        shm = Located("ipc: host", doc.span(ipc), doc.source)
    elif is_scalar(shm_size):
        shm_bytes = parse_size(word(shm_size).text)
        shm = Located(f"shm_size: {shm_size.value}", doc.span(shm_size), doc.source)
    ports: list[Port] = []
    for p in items(keys.get("ports")):
        if is_scalar(p):
            # interpolated first (`${P:-8008}:${P:-8008}` is 8008:8008); a port left as a
            # variable nobody sets matches no port
            pw = word(p)
            host_ip, cport = parse_publish(pw.text)
            ports.append(Port(cport, True, host_ip, doc.span(p), "compose ports",
                              unresolved=cport is None and bool(pw.unresolved)
                              and publish_unresolved(pw.text)))
        elif is_map(p):
            target_node, ip_node = get(p, "target"), get(p, "host_ip")
            target = word(target_node) if is_scalar(target_node) else None
            ip = word(ip_node).text if is_scalar(ip_node) else ""
            published = get(p, "published")
            ports.append(Port(int(target.text) if target and target.text.isdigit() else None,
                              published is not None, ip, doc.span(p), "compose ports",
                              unresolved=target is not None and bool(target.unresolved)))
    nm = keys.get("network_mode")
    host_network = (Located("network_mode: host", doc.span(nm), doc.source)
                    if is_scalar(nm) and nm.value == "host" else None)
    image_node = keys.get("image")
    image = None
    if built is not None:
        # with `build:`, `image:` only names what the build makes; what runs is the build
        image = Located(built.base, built_at, doc.source) if built.base is not None else None
    elif is_scalar(image_node):
        iw = word(image_node)
        image = Located(iw.text, iw.span, doc.source)
    probes = ("healthcheck",) if is_map(keys.get("healthcheck")) and \
        keys.get_str("healthcheck", "disable") != "true" else ()
    ctx = Context(
        kind="compose",
        container_name=Located(name, doc.span(name_node), doc.source),
        object_kind="service",
        object_name=name,
        object_span=doc.span(svc),
        image=image,
        gpus=gpus,
        shm=shm,
        shm_size_bytes=shm_bytes,
        probes=probes,
        ports=tuple(ports),
        host_network=host_network,
        built_from=built.path if built is not None else None,
    )
    pin = Located(built.pin, built_at, doc.source) \
        if built is not None and built.pin is not None else None
    scope = Scope(doc.source, ctx, env=env, version_pin=pin)
    entrypoint = keys.get("entrypoint")
    command = keys.get("command")
    ep_words, ep_list = _argv(doc, entrypoint, word)
    cmd_words, cmd_list = _argv(doc, command, word)
    list_form = (entrypoint is None or ep_list) and (command is None or cmd_list)
    scope.list_form = bool(list_form)
    if entrypoint is not None:
        found.extend(find_launches(ep_words + cmd_words, scope))
    elif built is not None:
        if command is not None:
            found.extend(_run_built(built, built_at, cmd_words, scope))
    elif image is not None and image_node is not None:
        from_image = launch_from_image(image, word(image_node), cmd_words, scope)
        if from_image.launches or not cmd_words:
            found.extend(from_image)
        else:
            found.extend(find_launches(cmd_words, scope))
    elif cmd_words:
        found.extend(find_launches(cmd_words, scope))


# A build context that is not a directory of the linted tree: a Git repository or a URL
_REMOTE_CONTEXT = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|github\.com/)", re.I)


def _built_image(doc: Doc, build: Any, word: Callable[[Any], Word], found: Found
                 ) -> tuple[BuiltImage, Span] | None:
    """The image a service's `build:` makes, read from its Dockerfile when that is in the
    linted tree, and where in the compose file its values are shown (the `dockerfile:` value,
    else the `context:`, else `build:` itself).

    Compose build specification (compose-spec build.md): a string is the context; `context`
    defaults to `.` (compose-spec #376) and a relative one is resolved from the compose file's
    folder; `dockerfile` (default `Dockerfile`) is relative to the context; `dockerfile_inline`
    is the Dockerfile's text; `target` is the stage built.  A remote context, a value left as
    a variable or a Dockerfile that is not there gives None: what the image runs is unknown."""
    if build is None or doc.source.path.startswith("<"):
        return None
    context_node = dockerfile_node = inline = target_node = None
    if is_scalar(build):
        context_node = build
    elif is_map(build):
        context_node, dockerfile_node = get(build, "context"), get(build, "dockerfile")
        inline, target_node = get(build, "dockerfile_inline"), get(build, "target")
    else:
        return None
    values = []
    for node in (context_node, dockerfile_node, target_node):
        w = word(node) if is_scalar(node) else None
        if w is not None and w.unresolved:
            return None
        values.append(w.text.strip() if w is not None else None)
    context, dockerfile, target = values
    shown_at = next((n for n in (dockerfile_node, inline, context_node) if n is not None), build)
    at = doc.span(shown_at)
    if is_scalar(inline):
        text = word(inline).text
        source = SourceFile(doc.source.path, text, "dockerfile")
    else:
        context = context or "."
        if _REMOTE_CONTEXT.match(context):
            return None
        folder = os.path.dirname(os.path.abspath(doc.source.path))
        path = os.path.join(folder, context, dockerfile or "Dockerfile")
        if not os.path.lexists(path):
            return None
        shown = os.path.join(os.path.dirname(doc.source.path), context,
                             dockerfile or "Dockerfile")
        try:  # services building one Dockerfile read and parse it once (safeio.memo)
            image = safeio.memo(path, ("compose-build", target),
                                lambda p: _build_of(p, os.path.normpath(shown), target),
                                spend=(doc.source.budget, at,
                                       f"the Dockerfile {os.path.normpath(shown)}"))
        except safeio.SideBudgetSpent:
            return None  # what the image runs is not known
        except safeio.SideFileError as err:
            found.findings.append(_unread_build(doc, err, at, os.path.normpath(shown)))
            return None
        return (image, at) if image is not None else None
    from .dockerfile import built_image  # only for a service with `build:`

    try:
        image = built_image(source, target)
    except safeio.PartlyRead as err:
        found.findings.append(_unread_build(doc, err, at, None))
        return None
    return (image, at) if image is not None else None


def _unread_build(doc: Doc, err: safeio.SideFileError, at: Span, shown: str | None) -> Finding:
    """The finding for a build whose Dockerfile (``shown``; None: inline) is not read: on the
    file where it fails, or, read only up to a bound, a warning at the build in the compose
    file (the Dockerfile read alone gets its own where reading stops)."""
    what = f"the Dockerfile of {os.path.basename(doc.source.path)}'s build" \
        if shown is not None else "the inline Dockerfile of this build"
    if isinstance(err, safeio.PartlyRead):
        return Finding("MG001", Severity.WARNING,
                       f"{what} is not read: {err.message}, so what the image runs is not known",
                       doc.source, at, hint="lint a Dockerfile of the stages the image is "
                       "built from")
    return safeio.side_finding(shown or doc.source.path, err,
                               f"{what} is not read (what the image runs is not known)")


def _build_of(path: str, shown: str, target: str | None) -> BuiltImage | None:
    from .dockerfile import built_image  # only for a service with `build:`

    source = SourceFile(shown, safeio.read_text(path), "dockerfile")
    return built_image(source, target, os.path.realpath(path))


def _run_built(image: BuiltImage, at: Span, args: list[Word], scope: Scope) -> Found:
    """The launch of a built image run with the service's `command:` ``args``: the image's
    exec-form ENTRYPOINT followed by them, else its base image's own entrypoint with them
    (a shell-form ENTRYPOINT takes no arguments).  Words from the Dockerfile are shown at
    ``at``; the service's keep their places."""
    if isinstance(image.entrypoint, str):
        return search_script(image.entrypoint, placed_word(image.entrypoint, at), scope)
    if image.entrypoint is not None:
        return find_launches([placed_word(w, at, quoted=True) for w in image.entrypoint] + args,
                             scope)
    if image.base is None:
        return Found()
    base = Located(image.base, at, scope.source)
    from_image = launch_from_image(base, placed_word(image.base, at), args, scope)
    return from_image if from_image.launches or not args else find_launches(args, scope)


def _argv(doc: Doc, node: Any, word) -> tuple[list[Word], bool]:  # type: ignore[no-untyped-def]
    """Words of a compose command/entrypoint: a list (exec form) or a string split like a
    shell would split it (compose splits strings with shell-word rules, without a shell)."""
    if is_seq(node):
        return [word(n) for n in node.value if is_scalar(n)], True
    if is_scalar(node) and node.tag != "tag:yaml.org,2002:null":
        w = word(node)
        words: list[Word] = []
        budget = doc.source.budget
        cut = budget.cut
        compose_word = WordComposer(w)
        for cmd in split_commands(w.text, budget=budget, cmap=w.cmap):
            words.extend(compose_word.many(cmd.words))
        if budget.cut is not cut:
            # the words ran out in this command: read without them, the service would be a
            # launch of the image's default command (a false "no model given")
            raise _OutOfWords(budget.cut)
        return words, False
    return [], True


def _gpus(doc: Doc, svc: Keys, word: Callable[[Any], Word]) -> GpuRequest | None:
    for dev in items(svc.get("deploy", "resources", "reservations", "devices")):
        caps = [c.value for c in items(get(dev, "capabilities")) if is_scalar(c)]
        driver = get_str(dev, "driver")
        if "gpu" not in caps and driver not in ("nvidia", "amd"):
            continue
        count = get(dev, "count")
        ids = get(dev, "device_ids")
        if is_scalar(count):
            value = word(count).text.strip()
            return GpuRequest(int(value) if value.isdigit() else None, "compose device count",
                              doc.span(count), driver or "nvidia")
        if is_seq(ids):
            id_list = tuple(word(i).text for i in ids.value if is_scalar(i))
            return GpuRequest(len(id_list), "compose device_ids", doc.span(ids),
                              driver or "nvidia", device_ids=id_list)
        # no count and no device_ids: all GPUs of the host
        return GpuRequest(None, "compose devices (all GPUs)", doc.span(dev), driver or "nvidia")
    gpus = svc.get("gpus")
    if is_scalar(gpus):
        v = word(gpus).text.strip()
        return GpuRequest(int(v) if v.isdigit() else None, "compose gpus", doc.span(gpus))
    if is_seq(gpus):
        return GpuRequest(None, "compose gpus", doc.span(gpus))
    return None
