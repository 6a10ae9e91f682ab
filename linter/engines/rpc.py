"""`ggml-rpc-server` / `rpc-server` argument walker (llama.cpp tools/rpc, master 3f545bec).

Exact string compare of each word (no ``_`` normalisation, no ``=`` form, no environment
variables); an unknown argument prints the usage and exits.  Facts: llama-notes.md §6.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..findings import Finding, Severity
from ..launch import RPC_SERVER, Launch
from .adapter import RPC_WORKER, Bind, Engine
from .catalog import rpc_catalog
from .invocation import Builder, Invocation, OptionValue
from .llamacpp import stoi

PORT_RANGE = (1, 65535)


def parse_rpc(launch: Launch, version: str | None = None,
              needed: Mapping[str, tuple[str, ...]] | None = None
              ) -> tuple[Invocation, list[Finding]]:
    catalog = rpc_catalog()
    b = Builder(launch, catalog, catalog.version, needed or {})
    # an unquoted expansion to nothing is no argument at all (the shell drops it)
    words = tuple(w for w in launch.args if w.text or w.quoted or launch.list_form)
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        match = catalog.lookup(text)
        if match is None:
            head, sep, rest = text.partition(" ")
            head_match = catalog.lookup(head) if sep else None
            if head_match is not None:
                b.glued(word, head, rest, "the RPC server", "exits (unknown argument)")
                b.add(OptionValue(key=head_match.option.key, spelling=head,
                                  flag_span=word.span, known=False))
                i += 1
                continue
            if word.unresolved and text.startswith("$"):
                i += 1
                continue
            retired = catalog.retired_by_spelling.get(text)
            suggestion = None if retired else catalog.suggest(text)
            message = f"unknown argument {text}: the RPC server prints its usage and exits"
            if retired is not None:
                message = (f"{text} was removed from the RPC server (llama.cpp "
                           f"{retired.last}); it now prints its usage and exits")
            elif suggestion:
                message += f"; did you mean {suggestion}?"
            b.report("MG004", Severity.ERROR, message, word.span,
                     hint=retired.hint if retired else None)
            nxt = words[i + 1] if i + 1 < len(words) else None
            # the value an unknown flag may have had is not a second problem
            i += 2 if text.startswith("-") and nxt is not None and \
                not nxt.text.startswith("-") else 1
            continue
        spec = match.option
        if not spec.takes_value:
            b.add(OptionValue(key=spec.key, spelling=text, flag_span=word.span, value=True))
            i += 1
            continue
        if i + 1 >= len(words):
            b.report("MG005", Severity.ERROR, f"{text} needs a value", word.span,
                     hint=f"write {text} VALUE")
            b.add(OptionValue(key=spec.key, spelling=text, flag_span=word.span, known=False))
            i += 1
            continue
        value_word = words[i + 1]
        raw = value_word.text
        common = {"key": spec.key, "spelling": text, "flag_span": word.span,
                  "value_span": value_word.span, "raw": raw}
        if value_word.unresolved:
            b.report_unresolved(spec, value_word.unresolved)
            b.add(OptionValue(**common, known=False))
            i += 2
            continue
        error: str | None = None
        value: object = raw
        if spec.type == "int":
            number = stoi(raw)
            low = PORT_RANGE[0] if spec.key == "port" else 1
            high = PORT_RANGE[1] if spec.key == "port" else None
            if number is None or number < low or (high is not None and number > high):
                error = (f"'{raw}' is not a port number ({low}-{high})" if high
                         else f"'{raw}' is not a positive number")
            value = number
        elif spec.sep:
            value = [x for x in raw.replace("/", ",").split(",") if x]
        if error is not None:
            b.report("MG006", Severity.ERROR,
                     f"invalid value for {text}: {error}; the RPC server exits with "
                     "\"Invalid parameters\"", value_word.span)
            b.add(OptionValue(**common, known=False))
        else:
            b.add(OptionValue(**common, value=value))
        i += 2
    b.duplicates(b.argv, describe=lambda o: o.spelling if o.raw is None else
                 f"{o.spelling} {o.raw}")
    return b.build(RPC_SERVER, launch.entry, None), b.findings


def _default_bind(d: object) -> Bind:
    return Bind("127.0.0.1", "the RPC server's default")  # tools/rpc/rpc-server.cpp params


ENGINE = Engine(
    name=RPC_SERVER, display="the llama.cpp RPC server", label="the RPC server",
    capabilities=frozenset({RPC_WORKER}),
    parse=parse_rpc, catalog=lambda version: rpc_catalog(),
    default_port=50052,  # tools/rpc/rpc-server.cpp default (llama.cpp master 2026-08-22)
    host_flag="-H", default_bind=_default_bind,
)
