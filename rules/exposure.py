"""Network exposure: the RPC server and the engine API (MG601-MG606)."""

from __future__ import annotations

from typing import Iterator

from mgpu_lint.bounds import MAX_FINDINGS_PER_CODE
from mgpu_lint.deployment import Deployment, Reaches, bounded, forwards_to, from_services, \
    public_reach
from mgpu_lint.engines.adapter import HTTP_API, LLAMA_ARGS, RPC_WORKER
from mgpu_lint.facts.network import address_kind, bind_address
from mgpu_lint.findings import Finding, Related, Severity

from .registry import Rule, rule

# The banner ggml-rpc-server prints when its host is not exactly "127.0.0.1"
# (tools/rpc/rpc-server.cpp, llama.cpp master 2026-08-22).
RPC_BANNER = ("WARNING: Host ('<host>') is != '127.0.0.1' / Never expose the RPC server to an "
              "open network! / This is an experimental feature and is not secure!")


def _left_out(reaches: Reaches, what: str, starts: Related
              ) -> tuple[str, tuple[Related, ...]] | None:
    """The summary of the ways in past MAX_FINDINGS_PER_CODE: its message's head, where it
    stands and its related locations (the last way, where the server starts)."""
    first, last = reaches.first_left_out, reaches.last
    if first is None or last is None:
        return None
    related = (Related(last.source, last.span, f"the last of them: {last.message}"), starts) \
        if last is not first else (starts,)
    return (f"and {reaches.more:,} more ways {what} from here on, not listed one by one (the "
            f"first {MAX_FINDINGS_PER_CODE} are): {first.message}", related)


def _loopback(d: Deployment) -> bool:
    bound = bind_address(d)
    return bound is not None and address_kind(bound[0]) == "loopback"


@rule("MG601", "rpc-server-exposed", Severity.ERROR,
      "the RPC server (no authentication) listens beyond loopback",
      needs={RPC_WORKER}, reads=("host",), given=("host",))
def rpc_server_exposed(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks the address `ggml-rpc-server` (formerly `rpc-server`) binds with
    `-H/--host` (default 127.0.0.1).

    Why is this bad? The RPC server has no authentication and no encryption: whoever reaches
    its port can allocate buffers on the GPU, read and write them, and run graphs. The server
    itself warns at start-up when the host is anything but exactly 127.0.0.1:

        WARNING: Host ('<host>') is != '127.0.0.1'
                 Never expose the RPC server to an open network!
                 This is an experimental feature and is not secure!

    Binding all interfaces (`0.0.0.0`, `::`) or a public address is an error. A private LAN
    address is a warning: it is what a multi-machine setup on a private network does on purpose,
    but everyone on that network can use the GPU. Loopback is silent.

    Use instead: bind the address of a dedicated, isolated interface, or keep 127.0.0.1 and
    reach it through an SSH tunnel or a WireGuard link.
    """
    host = d.inv.host
    if not host.known or not host.given or host.value is None:
        return
    kind = address_kind(str(host.value))
    if kind == "loopback":
        return
    value = str(host.value)
    span = host.span or d.program_span
    math = (f"ggml-rpc-server prints: {RPC_BANNER.replace('<host>', value)}",)
    if kind in ("all", "public"):
        where = "every interface" if kind == "all" else f"the public address {value}"
        yield rpc_server_exposed.finding(
            f"the RPC server binds {where}: it has no authentication, so anyone who reaches "
            f"port {_rpc_port(d)} can run code on this machine's GPUs",
            d.source, span, math=math,
            hint="bind 127.0.0.1 (the default) or the address of an isolated private "
                 "interface",
        )
    else:
        what = "the private address" if kind == "private" else "the host name"
        yield rpc_server_exposed.finding(
            f"the RPC server binds {what} {value}: everyone on that network can use this "
            "machine's GPUs (the server has no authentication)",
            d.source, span, math=math,
            hint="keep the network isolated to the llama.cpp machines, or tunnel the port",
            severity=Severity.WARNING,
        )


def _rpc_port(d: Deployment) -> int:
    port = d.inv.port
    if port.known and isinstance(port.value, int):
        return port.value
    return d.adapter.default_port


@rule("MG602", "rpc-port-published", Severity.ERROR,
      "the RPC server's port is published on all interfaces or by a public Service",
      needs={RPC_WORKER}, reads=("port",))
def rpc_port_published(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds the RPC server's port (`-p`, default 50052) published to the outside:
    a compose or `docker run` port mapping without a `127.0.0.1:` host address, a Kubernetes
    NodePort/LoadBalancer Service that selects the pod, a `hostPort`, or host networking.

    Why is this bad? The RPC protocol has no authentication (see MG601). Publishing the port
    on every interface of the host makes the GPU reachable from any network the host is on.

    Use instead: publish it on the LAN address only (`"192.168.1.20:50052:50052"`), or on
    `127.0.0.1` with a tunnel; in Kubernetes use a ClusterIP Service and a NetworkPolicy.
    """
    if _loopback(d):
        return  # bound to loopback inside: nothing outside reaches it (MG606)
    port = _rpc_port(d)
    reaches = public_reach(d, port, bound_host=False)
    hint = "publish it on a private address only, or use a ClusterIP Service with a " \
        "NetworkPolicy"
    starts = Related(d.source, d.program_span, "the RPC server starts here")
    for reach in reaches.listed:
        yield rpc_port_published.finding(
            f"the RPC port {port} is reachable from outside: {reach.message}; the RPC server "
            "has no authentication",
            reach.source, reach.span, hint=hint, related=(starts,),
        )
    more = _left_out(reaches, f"the RPC port {port} is reachable from outside", starts)
    if more is not None and reaches.first_left_out is not None:
        yield rpc_port_published.finding(
            f"{more[0]}; the RPC server has no authentication",
            reaches.first_left_out.source, reaches.first_left_out.span, hint=hint,
            related=more[1])


@rule("MG603", "rpc-public-address", Severity.ERROR,
      "llama-server sends weights and activations to an RPC server at a public address",
      needs={LLAMA_ARGS}, reads=("rpc",), given=("rpc",))
def rpc_public_address(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks every `host:port` of llama-server's `--rpc` list.

    Why is this bad? The RPC traffic is neither encrypted nor authenticated: a public address
    means the model's weights and every activation cross the internet in the clear, and the
    remote server must itself be exposed (MG601). It is also far too slow: each token's
    activations make a round trip per device boundary.

    Use instead: keep RPC servers on a private network (10.x, 172.16-31.x, 192.168.x) or
    behind a VPN.
    """
    rpc = d.inv.rpc
    if not rpc.known or not rpc.given:
        return
    for occ in rpc.occurrences:
        items = occ.items or tuple((entry, occ.span) for entry in (occ.raw or "").split(",")
                                   if entry)  # from the environment: no item positions
        for entry, span in items:
            host = entry.rsplit(":", 1)[0] if ":" in entry else entry
            if address_kind(host) == "public":
                yield rpc_public_address.finding(
                    f"--rpc {entry}: a public address; RPC traffic (weights, activations) is "
                    "unencrypted and unauthenticated",
                    d.source, span,
                    hint="reach RPC servers over a private network or a VPN",
                )


@rule("MG604", "rpc-no-cache", Severity.INFO,
      "an RPC server without `-c`: weights are sent over the network at every load",
      needs={RPC_WORKER})
def rpc_no_cache(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds RPC servers started without `-c/--cache`.

    Why is this bad? Without the cache, the client sends this server its share of the weights
    over the network every time llama-server loads the model: for 20 GB on a 1 Gb/s link that
    is almost three minutes per restart. With `-c` the server keeps tensors in a local file
    cache (`$LLAMA_CACHE/rpc/`) and the client sends only hashes for tensors it already has.

    Use instead: `ggml-rpc-server -c …`.
    """
    cache = d.inv.cache
    if cache.given or not cache.known:
        return
    yield rpc_no_cache.finding(
        "RPC server without -c: llama-server resends this server's share of the weights over "
        "the network at every model load",
        d.source, d.program_span, hint="add -c to cache tensors locally",
    )


@rule("MG605", "api-without-key", Severity.WARNING,
      "the engine's API is reachable from outside without an API key",
      needs={HTTP_API})
def api_without_key(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds vLLM and llama-server APIs reachable from outside the host or cluster
    — a port published on all interfaces, a NodePort or LoadBalancer Service (without an
    internal-load-balancer annotation), a hostPort, or host networking — with no API key
    (`--api-key`, or the `VLLM_API_KEY` / `LLAMA_API_KEY` environment variable).

    Why is this bad? Anyone who finds the port can run inference on your GPUs, list the served
    models, and (with LoRA runtime updates or admin endpoints enabled) change what is served.

    `--host 0.0.0.0` inside a container is not reported on its own: the container's network
    is private until a port is published. vLLM's demo server (`python -m
    vllm.entrypoints.api_server`) has no authentication at all: the finding says so.

    Use instead: set `--api-key` from a secret (`VLLM_API_KEY` via `secretKeyRef`), or put an
    authenticating gateway in front and publish only to it.
    """
    if not d.launch.serves_api:
        return  # no HTTP server of its own (a Dynamo worker)
    key = d.inv.api_key
    if key.given or not key.known:
        return
    env_names = d.adapter.api_key_env
    if any(name in d.launch.env for name in env_names):
        return
    if any(d.inv.setting(k).given for k in d.adapter.api_key_settings):
        return
    port = d.inv.port
    api_port = port.value if port.known and isinstance(port.value, int) else \
        d.adapter.default_port
    if not port.known or _loopback(d):
        return  # bound to loopback: unreachable from outside, which is MG606's finding
    flag = d.adapter.api_key_flag
    if flag is None:
        missing = f"it has no authentication ({d.adapter.display} takes no API key)"
        hint = "publish the port only behind an authenticating gateway, or serve the model " \
            "with a server that takes an API key"
    else:
        missing = f"no {flag} is set"
        hint = (f"set {flag} (or {env_names[0]} from a secret)" if env_names else
                f"set {flag} (from a secret)") + \
            ", or publish the port only behind an authenticating gateway"
    reaches = public_reach(d, api_port)
    starts = Related(d.source, d.program_span, "the server starts here")
    for reach in reaches.listed:
        yield api_without_key.finding(
            f"the {d.adapter.label} API (port {api_port}) is reachable from outside: "
            f"{reach.message}; {missing}",
            reach.source, reach.span, hint=hint, related=(starts,),
        )
    more = _left_out(reaches, f"the {d.adapter.label} API (port {api_port}) is reachable from "
                     "outside", starts)
    if more is not None and reaches.first_left_out is not None:
        yield api_without_key.finding(
            f"{more[0]}; {missing}", reaches.first_left_out.source,
            reaches.first_left_out.span, hint=hint, related=more[1])


@rule("MG606", "loopback-behind-service", Severity.WARNING,
      "a server bound to loopback behind a Service or a published port: it reaches nobody")
def loopback_behind_service(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds a vLLM, llama-server or RPC server that binds a loopback address
    (127.0.0.1, localhost, ::1) inside a container or pod while a Kubernetes Service selects
    the pod, or a compose / `docker run` port mapping or a hostPort publishes its port.

    Why is this bad? A Service and a published port forward to the container's own network
    address; a server that listens only on loopback never sees those connections, so every
    request through the Service or the port is refused. llama-server binds 127.0.0.1 unless
    `--host` or LLAMA_ARG_HOST says otherwise (common/common.h; llama.cpp's own images set
    LLAMA_ARG_HOST=0.0.0.0), ggml-rpc-server binds 127.0.0.1 unless `-H` is given, and vLLM
    binds every interface unless `--host` is given (vllm/entrypoints/launchers/launcher.py).

    Use instead: `--host 0.0.0.0` inside the container (the container's network is private
    until a port is published), with an API key where the port is public (MG605).
    """
    if not d.context.in_container or not d.launch.serves_api:
        return
    bound = bind_address(d)
    if bound is None or address_kind(bound[0]) != "loopback":
        return
    port = d.inv.port
    if not port.known:
        return
    number = port.value if isinstance(port.value, int) else d.adapter.default_port
    own: list[Related] = []
    for p in d.context.ports:
        if p.published and not p.unresolved and (p.container_port is None
                                                  or p.container_port == number):
            own.append(Related(d.source, p.span, f"{p.origin} publishes port {number}"))
    services = from_services(d.services, ("forwards", number), lambda s: tuple(
        Related(svc.source, svc.type.span or svc.span,
                f"Service `{svc.name}` ({svc.type.value}) forwards to the pod")
        for svc in forwards_to(s, number)))
    listed, more, first_left_out, last = bounded(own, services)
    if not listed:
        return
    ways = listed
    if first_left_out is not None:
        # a pod behind 30,000 Services: the first ones one by one, as the findings of a code
        ways.append(Related(first_left_out.source, first_left_out.span,
                            f"and {more:,} more ways in from here on, not listed one by one "
                            f"(the first {MAX_FINDINGS_PER_CODE} are): {first_left_out.message}"))
        if last is not None and last is not first_left_out:
            ways.append(Related(last.source, last.span, f"the last of them: {last.message}"))
    value, how, span = bound
    what = d.adapter.label
    first = ways[0].message
    yield loopback_behind_service.finding(
        f"{what} listens on {value} only ({how}) but {first}: connections arrive on the "
        "container's network address, where nothing listens, so they are all refused",
        d.source, span or d.program_span,
        hint=f"add {d.adapter.host_flag} 0.0.0.0 (inside the container), and keep the port "
             "private or protected",
        related=tuple(ways),
    )


RULES: list[Rule] = [rpc_server_exposed, rpc_port_published, rpc_public_address, rpc_no_cache,
                     api_without_key, loopback_behind_service]
