"""Two real Syncthing instances replicating one folder over 127.0.0.1 only.

Each instance gets a private home; its config is edited before the first start so that sync
and the GUI/API listen on 127.0.0.1 only and local/global discovery, relays, NAT traversal,
upgrade checks, usage and crash reporting are all off. Only B dials A (mutual dials can stall
Syncthing 1.19 for 20 s); A starts first. Stopped by PID with SIGTERM."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

FOLDER = "chrollo"
OPTIONS = dict(globalAnnounceEnabled="false", localAnnounceEnabled="false", relaysEnabled="false",
               natEnabled="false", urAccepted="-1", autoUpgradeIntervalH="0", crashReportingEnabled="false",
               startBrowser="false", reconnectionIntervalS="2")
ENV = dict(os.environ, STNOUPGRADE="1", STNORESTART="1", STNODEFAULTFOLDER="1", STMONITORED="1", STHASHING="minio")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(pred, timeout: float = 60.0, step: float = 0.1):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            if pred():
                return time.monotonic() - t0
        except (OSError, KeyError, ValueError):
            pass
        time.sleep(step)
    raise TimeoutError(f"not within {timeout} s: {pred}")


class Instance:
    def __init__(self, root: Path, name: str):
        self.name, self.home, self.data = name, root / name / "st-home", root / name / "st-data"
        out = subprocess.run(["syncthing", "generate", "--home", str(self.home), "--no-default-folder",
                              "--skip-port-probing"], capture_output=True, text=True, check=True, env=ENV)
        self.id = re.search(r"Device ID: (\S+)", out.stdout + out.stderr).group(1)
        (self.data / ".stfolder").mkdir(parents=True)
        self.port, self.gui, self.key = _port(), _port(), f"key-{name}-{self.id[:7]}"
        self.proc = None

    def configure(self, peer: "Instance", dial: bool) -> None:
        cfg = self.home / "config.xml"
        root = ET.parse(cfg).getroot()
        root.find("gui/address").text, root.find("gui/apikey").text = f"127.0.0.1:{self.gui}", self.key
        for k, v in {**OPTIONS, "listenAddress": f"tcp://127.0.0.1:{self.port}"}.items():
            root.find(f"options/{k}").text = v
        d = ET.SubElement(root, "device", id=peer.id, name=peer.name, compression="metadata", introducer="false")
        ET.SubElement(d, "address").text = f"tcp://127.0.0.1:{peer.port}" if dial else "dynamic"
        f = ET.SubElement(root, "folder", id=FOLDER, label=FOLDER, path=str(self.data), type="sendreceive",
                          rescanIntervalS="10", fsWatcherEnabled="true", fsWatcherDelayS="1")
        for dev in (self.id, peer.id):
            ET.SubElement(f, "device", id=dev)
        ET.ElementTree(root).write(cfg)

    def api(self, path: str):
        req = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", headers={"X-API-Key": self.key})
        with _OPENER.open(req, timeout=5) as r:
            return json.load(r)

    def start(self) -> None:
        log = open(self.home.parent / "syncthing.log", "w")
        self.proc = subprocess.Popen(["syncthing", "serve", "--home", str(self.home), "--no-browser", "--no-restart",
                                      "--no-upgrade", "--logflags=3"], stdout=log, stderr=subprocess.STDOUT, env=ENV)
        log.close()
        wait(lambda: self.api("/rest/system/ping")["ping"] == "pong")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


class Pair:
    """``a.data`` and ``b.data`` are kept in sync by two Syncthing processes on loopback."""

    def __init__(self, root: Path):
        self.a, self.b = Instance(root, "st-a"), Instance(root, "st-b")
        self.a.configure(self.b, dial=False)
        self.b.configure(self.a, dial=True)
        try:
            self.a.start()
            self.b.start()
            for n, p in ((self.a, self.b), (self.b, self.a)):
                wait(lambda: n.api("/rest/system/connections")["connections"][p.id]["connected"])
                wait(lambda: n.api(f"/rest/db/status?folder={FOLDER}")["state"] == "idle")
        except BaseException:
            self.stop()
            raise

    def loopback_only(self) -> list:
        """Sockets the two processes own that are not on 127.0.0.1 (must be [])."""
        ss = subprocess.run(["ss", "-tunap"], capture_output=True, text=True).stdout.splitlines()
        mine = [ln for ln in ss if any(f"pid={i.proc.pid}," in ln for i in (self.a, self.b))]
        return [ln for ln in mine if any(not re.match(r"(127\.|\[::ffff:127\.|0\.0\.0\.0:\*|\*:\*)", x)
                                         for x in ln.split()[4:6])]

    def stop(self) -> None:
        for i in (self.a, self.b):
            i.stop()
