"""mDNS discovery on the local network (the ``zeroconf`` package, loaded only here).

``chrollo mesh serve --announce`` publishes ``<node>._chrollo._tcp.local.`` (port, and the node
name and ID as TXT properties — nothing secret: finding a node gives no access, and a node is
only ever trusted by the ID the user paired). ``chrollo mesh peers discover`` lists the nodes it
hears within a few seconds; with ``--add`` it records the address of those already paired by
ID (discovery finds addresses, it never pairs). A server bound to 127.0.0.1 announces on
loopback only.
"""
from __future__ import annotations

import socket
import time

from ..errors import ChrolloError

SERVICE = "_chrollo._tcp.local."


def _zeroconf():
    try:
        import zeroconf
    except ImportError:
        raise ChrolloError("lan_missing", "mDNS discovery needs the zeroconf package",
                           "pip install zeroconf (static peers work without it)") from None
    return zeroconf


class Announcement:
    """Publishes this node while alive; ``close()`` withdraws it."""

    def __init__(self, node: str, node_id: str, bind: str, port: int):
        zc_mod = _zeroconf()
        loopback = bind.startswith("127.")
        interfaces = [bind] if loopback else zc_mod.InterfaceChoice.All
        addresses = [socket.inet_aton(bind if loopback or bind != "0.0.0.0" else _primary_ip())]
        self.zc = zc_mod.Zeroconf(interfaces=interfaces)
        self.info = zc_mod.ServiceInfo(SERVICE, f"{node}.{SERVICE}", addresses=addresses, port=port,
                                       properties={"node": node, "id": node_id, "v": "2"})
        self.zc.register_service(self.info)

    def close(self) -> None:
        try:
            self.zc.unregister_service(self.info)
        finally:
            self.zc.close()


def discover(timeout: float = 3.0) -> list:
    """[{"node", "address"}] of the chrollo nodes announcing themselves within ``timeout`` s."""
    zc_mod = _zeroconf()
    zc = zc_mod.Zeroconf()
    names: set = set()

    def on_change(zeroconf, service_type, name, state_change):
        if state_change is zc_mod.ServiceStateChange.Added:
            names.add(name)

    browser = zc_mod.ServiceBrowser(zc, SERVICE, handlers=[on_change])
    try:
        time.sleep(timeout)
        found = []
        for name in sorted(names):
            info = zc.get_service_info(SERVICE, name, timeout=2000)
            if info is None or not info.addresses:
                continue
            props = {k.decode(): (v or b"").decode() for k, v in (info.properties or {}).items()}
            found.append({"node": props.get("node") or name.split(".")[0], "id": props.get("id"),
                          "address": f"{socket.inet_ntoa(info.addresses[0])}:{info.port}"})
        return found
    finally:
        browser.cancel()
        zc.close()


def _primary_ip() -> str:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()
