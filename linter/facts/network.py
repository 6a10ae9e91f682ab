"""The address a server really binds, and what kind of address it is: read by the exposure
rules (MG601-MG606)."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..deployment import Deployment
    from ..source import Span


# RFC 1918, carrier-grade NAT (RFC 6598), link-local and IPv6 unique-local: networks a site
# keeps to itself.  Everything else that is not loopback is routable, hence public.
PRIVATE_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16",
    "fc00::/7", "fe80::/10"))


def address_kind(host: str) -> str:
    """'loopback', 'all', 'private', 'public' or 'name' (a host name we cannot place)."""
    h = host.strip().strip("[]")
    if h in ("localhost", "ip6-localhost"):
        return "loopback"
    if h in ("0.0.0.0", "::", "*", ""):
        return "all"
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return "name"
    if ip.is_loopback:
        return "loopback"
    if ip.is_unspecified:
        return "all"
    if any(ip in net for net in PRIVATE_NETWORKS if net.version == ip.version):
        return "private"
    return "public"


def bind_address(d: Deployment) -> tuple[str, str, Span | None] | None:
    """The address the server really binds, why, and the token that states it; None when it
    cannot be known (a broken or unresolved host, a custom image that may set the env).

    vLLM binds ``(args.host or "", args.port)``: every interface unless --host is given
    (vllm/entrypoints/launchers/launcher.py setup_server, 0.30.0).  llama-server: --host on the
    command line beats LLAMA_ARG_HOST (common/arg.cpp warns "environment variable is set, but
    will be overwritten"), which beats the image's ENV, which beats 127.0.0.1.  ggml-rpc-server:
    -H, else 127.0.0.1 (tools/rpc/rpc-server.cpp)."""
    host = d.inv.host
    if not host.known:
        return None
    if host.given and host.value is not None:
        win = host.winner
        how = (f"{win.spelling} from the environment" if win is not None and win.origin == "env"
               else f"{d.adapter.host_flag} {host.value}")
        return str(host.value), how, host.span
    default = d.adapter.default_bind(d)  # the engine's default, per engine (engines/*.py)
    return (default.host, default.why, None) if default is not None else None
